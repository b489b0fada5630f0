// Fixed file names and one chunk: web/dist/ is committed and embedded in
// the tandem binary, and CI checks that a build reproduces it exactly.
// react-style-singleton is replaced by src/style-singleton.js, which keeps
// the dialogs' scroll lock within the page's content security policy.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

export default defineConfig({
  plugins: [react()],
  base: '/',
  resolve: { alias: { 'react-style-singleton': fileURLToPath(new URL('./src/style-singleton.js', import.meta.url)) } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 2000,
    rollupOptions: {
      output: {
        entryFileNames: 'assets/app.js',
        chunkFileNames: 'assets/[name].js',
        assetFileNames: 'assets/[name][extname]',
        inlineDynamicImports: true,
      },
    },
  },
  server: { proxy: { '/api': { target: 'http://127.0.0.1:8080', ws: true } } },
});
