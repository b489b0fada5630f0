// The dashboard in a real browser: a run of the cruise control on the
// virtual clock, paced to the wall clock, its counters advancing; its gain
// changed from the page, and the output answering (v_ref = gain × pedal).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { perFile, shot } from './support.mjs';

const shared = perFile(before, after);

/** Waits until `locator`'s text passes `ok`; returns it. */
async function until(locator, ok, timeout = 15000) {
  const end = Date.now() + timeout;
  for (;;) {
    const text = await locator.textContent().catch(() => '');
    if (ok(text)) return text;
    if (Date.now() > end) throw new Error(`still "${text}" after ${timeout} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('a running session\'s counters advance, and a new gain shows in its output', async () => {
  const { page, server } = shared;
  await page.goto(server.url);
  await page.getByRole('tab', { name: 'Dashboard' }).click();
  await page.getByLabel('configuration').fill('config/examples/cruise.toml');
  await page.getByLabel('virtual clock').setChecked(true);
  await page.getByLabel('pace').fill('1');
  await page.getByLabel('duration').fill('60');
  await page.getByRole('button', { name: 'Start run' }).click();
  const frames = page.getByTestId('run-frames');
  const first = Number(await until(frames, (t) => Number(t) > 0));
  await new Promise((r) => setTimeout(r, 1000));
  const second = Number(await until(frames, (t) => Number(t) > first));
  assert.ok(second > first, `frames ${first} then ${second}`);
  await shot(page, 'dashboard-1-running');

  const vRef = page.getByTestId('live-v_ref');
  assert.equal(await until(vRef, (t) => t === '25'), '25', 'v_ref = 50 × 0.5 before the change');
  await page.getByLabel('change kind').selectOption('block');
  await page.getByLabel('block', { exact: true }).selectOption('speed_map');
  await page.getByLabel('parameter').selectOption('gain');
  await page.getByLabel('new value').fill('30');
  await page.getByRole('button', { name: 'Change' }).click();
  assert.equal(await until(vRef, (t) => t === '15'), '15', 'v_ref = 30 × 0.5 after it');
  await until(page.getByTestId('change-log'), (t) => /applied at frame \d+/.test(t));
  await shot(page, 'dashboard-2-changed');
  await page.getByRole('button', { name: 'Stop' }).click();
  await until(page.getByTestId('run-end'), (t) => t.startsWith('done'));
});
