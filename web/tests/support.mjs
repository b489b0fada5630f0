// What the browser tests share: a `tandem serve` process on a free port,
// Debian's Chromium driven by playwright-core, and screenshots kept in
// web/test-artifacts/.
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

export const web = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const root = resolve(web, '..');
export const tandem = process.env.TANDEM_BIN || join(root, 'target/release/tandem');
const artifacts = join(web, 'test-artifacts');

/** `tandem serve` on `folder` (the repository's by default); resolves to `{url, stop}`. */
export function serve(folder = root) {
  return new Promise((ok, fail) => {
    // TANDEM_PAGE: a built page to serve instead of the binary's own
    // (`npm run build` then the tests, with no rebuild of the binary).
    const page = process.env.TANDEM_PAGE ? ['--page', process.env.TANDEM_PAGE] : [];
    const child = spawn(tandem, ['serve', '--listen', '127.0.0.1:0', '--folder', folder, ...page], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child.on('error', fail);
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      const found = line.match(/http:\/\/[0-9.:]+/);
      if (found) ok({ url: found[0], stop: () => child.kill() });
    });
  });
}

/**
 * A fresh headless Chromium (with `extra` arguments) and a page of
 * `width` × `height`; `violations` collects what the page's content
 * security policy blocked.
 */
export async function browser(width = 1500, height = 950, extra = []) {
  const b = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...extra,
    ],
  });
  const page = await b.newPage({ viewport: { width, height } });
  const violations = [];
  page.on('pageerror', (e) => console.error('page error:', e.message));
  page.on('console', (m) => {
    if (m.text().includes('Content Security Policy')) violations.push(m.text());
  });
  return { browser: b, page, violations };
}

/** Saves a screenshot of `page` as test-artifacts/`name`.png. */
export async function shot(page, name) {
  mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: join(artifacts, `${name}.png`) });
}

/** Drags with the mouse from the centre of `from` to the centre of `to`. */
export async function drag(page, from, to) {
  const a = await from.boundingBox();
  const b = await to.boundingBox();
  const [ax, ay, bx, by] = [a.x + a.width / 2, a.y + a.height / 2, b.x + b.width / 2, b.y + b.height / 2];
  await page.mouse.move(ax, ay);
  await page.mouse.down();
  await page.mouse.move(ax + 6, ay + 6, { steps: 2 });
  await page.mouse.move(bx, by, { steps: 12 });
  await page.waitForTimeout(50);
  await page.mouse.up();
  await page.waitForTimeout(100);
}

/**
 * A server and a browser for the tests of one file, closed after them;
 * the page's content security policy must have blocked nothing.
 */
export function perFile(before, after) {
  const shared = {};
  before(async () => {
    shared.server = await serve();
    Object.assign(shared, await browser());
  });
  after(async () => {
    await shared.browser?.close();
    shared.server?.stop();
    assert.deepEqual(shared.violations, [], 'the content security policy blocked part of the page');
  });
  return shared;
}
