// The page: a model being edited (Editor), run offline (Run), and the
// real-time runs (Dashboard), in one theme (light or dark); the model is
// opened from and saved to the server's folder or this computer. The
// three views stay mounted, so that switching keeps each one's state;
// what they share (the model, the view shown) is in store.js.
import { StrictMode, useCallback, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { Theme } from '@radix-ui/themes';
import '@radix-ui/themes/styles.css';
import '@xyflow/react/dist/style.css';
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { api } from './api.js';
import { Dashboard } from './Dashboard.jsx';
import { Editor } from './Editor.jsx';
import { Header } from './Header.jsx';
import { Run } from './Run.jsx';
import { ConfirmProvider } from './confirm.jsx';
import { isTyping } from './shortcuts.js';
import { modelStore, textOf, useStore, viewStore } from './store.js';

const VIEWS = ['editor', 'run', 'dashboard'];
const APPEARANCE = 'tandem-appearance';

function initialAppearance() {
  const kept = localStorage.getItem(APPEARANCE);
  if (kept === 'light' || kept === 'dark') return kept;
  return window.matchMedia?.('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

function App() {
  const view = useStore(viewStore);
  const setView = viewStore.set;
  const model = useStore(modelStore);
  const [library, setLibrary] = useState([]);
  const [appearance, setAppearance] = useState(initialAppearance);
  const [help, setHelp] = useState(false);
  // The model's text: the editor's check sends it, and it differs from
  // the text last opened or saved while unsaved.
  const text = textOf(model);
  const unsaved = text !== model.saved;

  useEffect(() => {
    api('GET', '/api/blocks').then((r) => r.ok && setLibrary(r.json.blocks));
  }, []);
  useEffect(() => {
    localStorage.setItem(APPEARANCE, appearance);
    document.documentElement.style.colorScheme = appearance;
  }, [appearance]);
  // Closing or reloading the tab with unsaved changes asks first.
  useEffect(() => {
    if (!unsaved) return undefined;
    const guard = (e) => {
      e.preventDefault();
      e.returnValue = '';
    };
    window.addEventListener('beforeunload', guard);
    return () => window.removeEventListener('beforeunload', guard);
  }, [unsaved]);
  useEffect(() => {
    const key = (e) => {
      if (e.altKey && ['1', '2', '3'].includes(e.key)) {
        e.preventDefault();
        setView(VIEWS[Number(e.key) - 1]);
      } else if (e.key === '?' && !isTyping(e)) {
        setHelp(true);
      }
    };
    window.addEventListener('keydown', key);
    return () => window.removeEventListener('keydown', key);
  }, []);
  const toggleAppearance = useCallback(() => setAppearance((a) => (a === 'dark' ? 'light' : 'dark')), []);

  return (
    <Theme appearance={appearance} accentColor="indigo" grayColor="slate" radius="medium" scaling="95%">
      <ConfirmProvider>
        <div className="app">
          <Header
            view={view}
            setView={setView}
            unsaved={unsaved}
            appearance={appearance}
            toggleAppearance={toggleAppearance}
            help={help}
            setHelp={setHelp}
          />
          <main>
            <section className="view" hidden={view !== 'editor'} aria-label="Editor">
              <Editor text={text} library={library} active={view === 'editor'} />
            </section>
            <section className="view" hidden={view !== 'run'} aria-label="Run">
              <Run active={view === 'run'} />
            </section>
            <section className="view" hidden={view !== 'dashboard'} aria-label="Dashboard">
              <Dashboard active={view === 'dashboard'} />
            </section>
          </main>
        </div>
      </ConfirmProvider>
    </Theme>
  );
}

createRoot(document.getElementById('root')).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
