// The editor in a real browser: the cruise-control model built from the
// palette by dragging blocks and linking ports, run, its final speed equal
// to the command line's; the bouncing ball with a link removed, its error
// shown on the right block and port with the server's message, named by
// block and port instead of a line and column.
import { execFileSync } from 'node:child_process';
import { readFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseModel, serialize, detectStyle } from '../src/format.js';
import { removeLink, splitEnd, targets } from '../src/model.js';
import { describeError } from '../src/editor/errors.js';
import { drag, perFile, root, shot, tandem } from './support.mjs';

const shared = perFile(before, after);

async function post(path, body) {
  const r = await fetch(shared.server.url + path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body,
  });
  return { status: r.status, json: await r.json() };
}

test('the cruise control built from the palette runs to the command line\'s final speed', async () => {
  const { page, server } = shared;
  const file = JSON.parse(readFileSync(join(root, 'models/examples/cruise_control.json'), 'utf8'));
  await page.goto(server.url);
  await page.getByTestId('palette-Gain').waitFor();
  const pane = page.locator('.react-flow__pane');
  const box = await pane.boundingBox();
  for (const [i, block] of file.blocks.entries()) {
    const x = box.x + 40 + (i % 4) * 240;
    const y = box.y + 30 + Math.floor(i / 4) * 150;
    await page.getByTestId(`palette-${block.type}`).dragTo(pane, { targetPosition: { x: x - box.x, y: y - box.y } });
    const id = page.getByLabel('block id');
    await id.fill(block.id);
    await id.press('Enter');
    await page.getByTestId(`block-${block.id}`).waitFor();
    for (const [name, value] of Object.entries(block.params || {})) {
      const field = page.getByLabel(`param ${name}`);
      if (typeof value === 'boolean') {
        await field.setChecked(value);
      } else {
        await field.fill(typeof value === 'string' ? value : JSON.stringify(value));
        await field.press('Enter');
      }
    }
    if (block.sample_time !== undefined) {
      const field = page.getByLabel('param sample_time');
      await field.fill(JSON.stringify(block.sample_time));
      await field.press('Enter');
    }
  }
  await page.locator('.react-flow__controls-fitview').click();
  await shot(page, 'cruise-1-blocks');
  // Each link end's port name, as the server names the block's ports.
  const ports = {};
  for (const b of file.blocks) ports[b.id] = (await post('/api/ports', JSON.stringify(b))).json;
  const name = (list, text) => (text === undefined ? list[0] : /^\d+$/.test(text) ? list[Number(text) - 1] : text);
  for (const link of file.links) {
    const [src, sp] = splitEnd(link.from);
    for (const t of targets(link)) {
      const [dst, dp] = splitEnd(t);
      const from = page.getByTestId(`port-${src}-out-${name(ports[src].outputs, sp)}`);
      const to = page.getByTestId(`port-${dst}-in-${name(ports[dst].inputs, dp)}`);
      await drag(page, from, to);
    }
  }
  await shot(page, 'cruise-2-linked');
  await page.getByTestId('check-status').filter({ hasText: 'model checks' }).waitFor({ timeout: 10000 });

  await page.getByRole('tab', { name: 'Run' }).click();
  await page.getByLabel('solver').selectOption('rk4');
  await page.getByLabel('step').fill('0.01');
  await page.getByLabel('stop').fill('1000');
  await page.getByRole('button', { name: 'Run' }).click();
  const final = page.getByTestId('final-v');
  await final.waitFor({ timeout: 30000 });
  await shot(page, 'cruise-3-run');
  const out = join(mkdtempSync(join(tmpdir(), 'tandem-e2e-')), 'cruise.csv');
  execFileSync(tandem, ['sim', join(root, 'models/examples/cruise_control.json'), '--out', out]);
  const lines = readFileSync(out, 'utf8').trim().split('\n');
  const column = lines[0].split(',').indexOf('v');
  const cli = lines[lines.length - 1].split(',')[column];
  assert.equal(await final.textContent(), String(Number(cli)), `the plotted final speed is the CLI's ${cli}`);
});

test('a link removed from the bouncing ball shows its error on the right port', async () => {
  const { page, server } = shared;
  await page.goto(server.url);
  await page.getByLabel('open model').selectOption('bouncing_ball.json');
  await page.getByTestId('block-velocity').waitFor();
  await page.getByTestId('check-status').filter({ hasText: 'model checks' }).waitFor({ timeout: 10000 });
  const edge = page.getByTestId('rf__edge-gravity->velocity.in');
  // Clicked near its start: elsewhere a feedback link routed around the blocks may run beside it.
  const start = await edge.locator('path').first().evaluate((path) => {
    const p = path.getPointAtLength(6);
    const m = path.getScreenCTM();
    return { x: m.a * p.x + m.c * p.y + m.e, y: m.b * p.x + m.d * p.y + m.f };
  });
  await page.mouse.click(start.x, start.y);
  await page.keyboard.press('Delete');
  const port = page.locator('[data-testid="port-velocity-in-in"][data-port-error]');
  await port.waitFor({ timeout: 10000 });
  await shot(page, 'ball-error');
  // The server's own message for the same text.
  const text = readFileSync(join(root, 'models/examples/bouncing_ball.json'), 'utf8');
  const doc = parseModel(text);
  removeLink(doc, 'gravity', 'velocity.in');
  const expected = await post('/api/check', serialize(doc, detectStyle(text)));
  assert.equal(expected.status, 422);
  assert.equal(expected.json.place.block, 'velocity');
  assert.equal(expected.json.place.port, 'in');
  // Shown as the block and port it names, without the line and column of a text the user never sees.
  const shown = describeError(expected.json);
  assert.ok(shown.startsWith('block `velocity`, port `in`: '), shown);
  assert.doesNotMatch(shown, /\d+:\d+:/);
  assert.ok(shown.includes(expected.json.error.split('\n')[0].replace(/^\d+:\d+: block "velocity": /, '')), shown);
  assert.equal(await port.getAttribute('data-port-error'), shown);
  assert.match(await page.getByTestId('block-velocity').getAttribute('class'), /block-error/);
  assert.equal(await page.getByTestId('check-status').textContent(), shown);
});
