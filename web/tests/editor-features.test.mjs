// The editor's tools in a real browser, each judged by the model file the
// page saves (or by what it shows): the automatic layout, labelled ports,
// links bent through waypoints, selection and the clipboard across
// models, alignment, turning and mirroring, the palette's search through
// the block documentation, the model's own settings, the history after
// opening another model, the first drop after New, and subsystems opened
// in place.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { browser, root, serve, shot } from './support.mjs';

const shared = {};
const folder = mkdtempSync(join(tmpdir(), 'tandem-editor-'));
const examples = join(folder, 'models/examples');

// A chain a -> b -> c -> d written in another order and without layout.
const CHAIN = {
  name: 'chain',
  blocks: [
    { id: 'c', type: 'Gain', params: { gain: 3 } },
    { id: 'd', type: 'Output' },
    { id: 'a', type: 'Constant', params: { value: 1 } },
    { id: 'b', type: 'Gain', params: { gain: 2 } },
  ],
  links: [
    { from: 'a', to: 'b' },
    { from: 'b', to: 'c' },
    { from: 'c', to: 'd' },
  ],
};
// Blocks whose ports have names other than numbers.
const NAMED = {
  name: 'named ports',
  blocks: [
    { id: 'velocity', type: 'Integrator', params: { reset: 'rising', external_initial: true } },
    { id: 'choose', type: 'Switch' },
  ],
  links: [],
};

before(async () => {
  mkdirSync(examples, { recursive: true });
  for (const name of ['bouncing_ball.json', 'cruise_control.json', 'abs_slip.json']) {
    copyFileSync(join(root, 'models/examples', name), join(examples, name));
  }
  writeFileSync(join(examples, 'chain.json'), JSON.stringify(CHAIN, null, 2) + '\n');
  writeFileSync(join(examples, 'named.json'), JSON.stringify(NAMED, null, 2) + '\n');
  shared.server = await serve(folder);
  Object.assign(shared, await browser(1400, 900));
  await shared.page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: shared.server.url });
});
after(async () => {
  await shared.browser?.close();
  shared.server?.stop();
  assert.deepEqual(shared.violations, [], 'the content security policy blocked part of the page');
});

/** Answers "Discard unsaved changes?" when the page asks it. */
async function discardIfAsked(page) {
  const discard = page.getByRole('button', { name: 'Discard changes' });
  try {
    await discard.waitFor({ timeout: 700 });
    await discard.click();
  } catch {
    // Nothing unsaved: the page did not ask.
  }
}

/** A fresh page with `name` from models/examples opened, its blocks drawn and checked. */
async function open(name, first) {
  const { page, server } = shared;
  await page.goto(server.url);
  await page.getByTestId('palette-Gain').waitFor();
  await page.getByLabel('open model').selectOption(name);
  await discardIfAsked(page);
  await page.getByTestId(`block-${first}`).waitFor();
  await page.waitForTimeout(600);
  return page;
}

/** Presses New, discarding changes. */
async function newModel(page) {
  await page.getByRole('button', { name: 'New', exact: true }).click();
  await discardIfAsked(page);
  await page.getByTestId('status-counts').filter({ hasText: '0 blocks' }).waitFor();
}

/** Saves through the page as `name` (in the served folder) and returns the parsed file and its text. */
async function save(page, name) {
  await page.getByLabel('save as').fill(name);
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await page.getByText(`saved ${name}`).waitFor();
  const text = readFileSync(join(folder, name), 'utf8');
  return { file: JSON.parse(text), text };
}

/** The canvas's viewport: pane origin on the screen, translation and zoom. */
async function viewport(page) {
  const pane = await page.locator('.react-flow__pane').boundingBox();
  const transform = await page.locator('.react-flow__viewport').evaluate((e) => e.style.transform);
  const [, tx, ty, zoom] = transform.match(/translate\(([-\d.]+)px, ([-\d.]+)px\) scale\(([\d.]+)\)/).map(Number);
  return {
    toFlow: (p) => ({ x: (p.x - pane.x - tx) / zoom, y: (p.y - pane.y - ty) / zoom }),
    toScreen: (p) => ({ x: pane.x + tx + p.x * zoom, y: pane.y + ty + p.y * zoom }),
  };
}

const centre = (box) => ({ x: box.x + box.width / 2, y: box.y + box.height / 2 });
const byId = (file) => Object.fromEntries(file.blocks.map((b) => [b.id, b]));

test('a chain without layout opens left to right, and Lay out saves it that way', async () => {
  const page = await open('chain.json', 'a');
  const xs = [];
  for (const id of ['a', 'b', 'c', 'd']) xs.push((await page.getByTestId(`block-${id}`).boundingBox()).x);
  assert.ok(xs[0] < xs[1] && xs[1] < xs[2] && xs[2] < xs[3], `drawn left to right on opening: ${xs}`);
  await page.getByRole('button', { name: 'Lay out' }).click();
  await shot(page, 'features-layout');
  const { file } = await save(page, 'chain-laid.json');
  const b = byId(file);
  const x = ['a', 'b', 'c', 'd'].map((id) => b[id].layout.x);
  assert.ok(x[0] < x[1] && x[1] < x[2] && x[2] < x[3], `saved left to right: ${x}`);
  // A chain is one straight row: its blocks share a middle line (block heights differ by ports).
  const middles = ['a', 'b', 'c', 'd'].map((id) => b[id].layout.y);
  assert.ok(Math.max(...middles) - Math.min(...middles) <= 8, `one row: ${middles}`);
  // Every block inside the canvas after the layout.
  const pane = await page.locator('.react-flow__pane').boundingBox();
  for (const id of ['a', 'b', 'c', 'd']) {
    const box = await page.getByTestId(`block-${id}`).boundingBox();
    assert.ok(box.x >= pane.x && box.x + box.width <= pane.x + pane.width, `${id} inside the canvas`);
  }
  // The shortcut does the same: move a block away, press L, it comes back in line.
  await page.getByTestId('block-c').dragTo(page.locator('.react-flow__pane'), { targetPosition: { x: 60, y: pane.height - 80 } });
  await page.keyboard.press('l');
  const again = byId((await save(page, 'chain-laid-2.json')).file);
  assert.deepEqual(
    ['a', 'b', 'c', 'd'].map((id) => again[id].layout),
    ['a', 'b', 'c', 'd'].map((id) => b[id].layout),
  );
});

test('each port shows its name inside its block, beside its handle', async () => {
  const page = await open('named.json', 'velocity');
  const expected = { velocity: ['in', 'x0', 'reset'], choose: ['1', 'control', '3'] };
  for (const [id, names] of Object.entries(expected)) {
    const ports = await (
      await fetch(`${shared.server.url}/api/ports`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(NAMED.blocks.find((b) => b.id === id)),
      })
    ).json();
    assert.deepEqual([...ports.inputs].sort(), [...names].sort(), `the server's inputs of ${id}`);
    const block = await page.getByTestId(`block-${id}`).boundingBox();
    for (const name of ports.inputs) {
      const label = page.getByTestId(`label-${id}-in-${name}`);
      assert.equal(await label.textContent(), name);
      const box = await label.boundingBox();
      const handle = centre(await page.getByTestId(`port-${id}-in-${name}`).boundingBox());
      assert.ok(box.x >= block.x && box.x + box.width <= block.x + block.width, `${id}.${name}'s label inside the block`);
      assert.ok(Math.abs(centre(box).y - handle.y) < 3 && box.x - handle.x < 12, `${id}.${name}'s label beside its handle`);
    }
  }
  // Labels do not run into the block's name.
  const text = await page.getByTestId('block-velocity').locator('.block-text').boundingBox();
  const reset = await page.getByTestId('label-velocity-in-reset').boundingBox();
  assert.ok(reset.x + reset.width < text.x, 'the longest label ends before the block name starts');
  await shot(page, 'features-ports');
});

test('a link bent through a waypoint is saved with it, moved and removed', async () => {
  const page = await open('chain.json', 'a');
  const edge = page.getByTestId('rf__edge-b->c');
  const from = centre(await page.getByTestId('port-b-out-1').boundingBox());
  const to = centre(await page.getByTestId('port-c-in-1').boundingBox());
  // Select the link, then double-click it in its middle: a waypoint there.
  await edge.locator('path').first().click({ force: true });
  await page.waitForTimeout(100);
  assert.match(await edge.locator('.react-flow__edge-path').getAttribute('class'), /link-selected/, 'the selected link is highlighted');
  // A third of the way (the middle holds the handle that bends a selected link by dragging).
  const mid = { x: from.x + (to.x - from.x) / 3, y: from.y + (to.y - from.y) / 3 };
  await page.mouse.dblclick(mid.x, mid.y);
  let view = await viewport(page);
  let { file } = await save(page, 'bent.json');
  let points = file.links.find((l) => l.from === 'b').layout.waypoints;
  assert.equal(points.length, 1);
  const at = view.toFlow(mid);
  assert.ok(Math.abs(points[0].x - at.x) <= 2 && Math.abs(points[0].y - at.y) <= 2, `waypoint at the double-click ${JSON.stringify([points, at])}`);
  // Drag it 80 px down.
  const handle = page.getByTestId('waypoint-1-0');
  await handle.waitFor();
  const h = centre(await handle.boundingBox());
  await page.mouse.move(h.x, h.y);
  await page.mouse.down();
  await page.mouse.move(h.x + 10, h.y + 40, { steps: 4 });
  await page.mouse.move(h.x, h.y + 80, { steps: 4 });
  await page.mouse.up();
  await shot(page, 'features-waypoint');
  view = await viewport(page);
  ({ file } = await save(page, 'bent-2.json'));
  points = file.links.find((l) => l.from === 'b').layout.waypoints;
  const moved = view.toFlow({ x: h.x, y: h.y + 80 });
  assert.ok(Math.abs(points[0].x - moved.x) <= 2 && Math.abs(points[0].y - moved.y) <= 2, `moved ${JSON.stringify([points, moved])}`);
  const path = await edge.locator('.react-flow__edge-path').getAttribute('d');
  assert.equal((path.match(/L/g) || []).length, 2, `drawn through the waypoint: ${path}`);
  // Double-click the waypoint: it goes, and so does the link's layout.
  await page.getByTestId('waypoint-1-0').dblclick();
  ({ file } = await save(page, 'bent-3.json'));
  assert.equal(file.links.find((l) => l.from === 'b').layout, undefined);
  // Arrowheads: every link ends in a marker.
  assert.ok((await page.locator('.react-flow__edge-path[marker-end]').count()) >= 3);
});

test('blocks selected with shift-click are copied with the links between them into a new model, twice with new ids', async () => {
  const page = await open('cruise_control.json', 'error');
  const original = byId(JSON.parse(readFileSync(join(examples, 'cruise_control.json'), 'utf8')));
  await page.getByTestId('block-error').click();
  await page.getByTestId('block-controller').click({ modifiers: ['Shift'] });
  await page.getByTestId('block-net_force').click({ modifiers: ['Shift'] });
  await page.getByTestId('status-counts').filter({ hasText: '3 selected' }).waitFor();
  await page.keyboard.press('Control+c');
  await page.getByTestId('status-counts').filter({ hasText: 'Copied 3 blocks' }).waitFor();
  const clipboard = JSON.parse(await page.evaluate(() => navigator.clipboard.readText()));
  assert.deepEqual(clipboard.blocks.map((b) => b.id), ['error', 'controller', 'net_force'], 'the system clipboard holds the blocks as JSON');
  await newModel(page);
  await page.keyboard.press('Control+v');
  await page.getByTestId('block-net_force').waitFor();
  let { file } = await save(page, 'pasted.json');
  assert.deepEqual(
    file.blocks.map(({ layout, ...b }) => b),
    ['error', 'controller', 'net_force'].map((id) => original[id]),
  );
  assert.deepEqual(file.links, [
    { from: 'error', to: 'controller' },
    { from: 'controller', to: ['net_force.1'] },
  ]);
  // Again into the same model: new ids, links between the new blocks, beside the first copies.
  await page.keyboard.press('Control+v');
  await page.getByTestId('block-net_force2').waitFor();
  await shot(page, 'features-paste');
  ({ file } = await save(page, 'pasted-2.json'));
  const ids = file.blocks.map((b) => b.id);
  assert.deepEqual(ids, ['error', 'controller', 'net_force', 'error2', 'controller2', 'net_force2']);
  assert.deepEqual(file.links.slice(2), [
    { from: 'error2', to: 'controller2' },
    { from: 'controller2', to: ['net_force2.1'] },
  ]);
  const b = byId(file);
  assert.deepEqual([b.error2.layout.x - b.error.layout.x, b.error2.layout.y - b.error.layout.y], [40, 40]);
  // Delete removes the selection (the pasted copies) and its links.
  await page.keyboard.press('Delete');
  ({ file } = await save(page, 'pasted-3.json'));
  assert.deepEqual(file.blocks.map((x) => x.id), ['error', 'controller', 'net_force']);
  assert.equal(file.links.length, 2);
});

test('blocks selected in a rectangle align left, then on their middles', async () => {
  const page = await open('chain.json', 'a');
  await newModel(page);
  const pane = page.locator('.react-flow__pane');
  const spots = [
    ['Constant', 120, 120],
    ['Gain', 380, 260],
    ['Sum', 250, 420],
  ];
  for (const [type, x, y] of spots) {
    await page.getByTestId(`palette-${type}`).dragTo(pane, { targetPosition: { x, y } });
    await page.getByTestId(`block-${type.toLowerCase()}1`).waitFor();
  }
  await pane.click({ position: { x: 700, y: 600 } });
  // Shift-drag a rectangle around all three, wherever the canvas shows them.
  const boxes = [];
  for (const [type] of spots) boxes.push(await page.getByTestId(`block-${type.toLowerCase()}1`).boundingBox());
  const [x0, y0] = [Math.min(...boxes.map((b) => b.x)) - 30, Math.min(...boxes.map((b) => b.y)) - 30];
  const [x1, y1] = [Math.max(...boxes.map((b) => b.x + b.width)) + 30, Math.max(...boxes.map((b) => b.y + b.height)) + 30];
  await page.keyboard.down('Shift');
  await page.mouse.move(x0, y0);
  await page.mouse.down();
  await page.mouse.move((x0 + x1) / 2, (y0 + y1) / 2, { steps: 5 });
  await page.mouse.move(x1, y1, { steps: 5 });
  await page.mouse.up();
  await page.keyboard.up('Shift');
  await page.getByTestId('status-counts').filter({ hasText: '3 selected' }).waitFor();
  await page.getByRole('button', { name: 'Align', exact: true }).click();
  await page.getByRole('button', { name: 'Align left edges' }).click();
  let { file } = await save(page, 'aligned.json');
  assert.equal(new Set(file.blocks.map((b) => b.layout.x)).size, 1, JSON.stringify(file.blocks.map((b) => b.layout)));
  const left = Math.min(...spots.map(([, x]) => x));
  await page.getByRole('button', { name: 'align middle' }).click();
  ({ file } = await save(page, 'aligned-2.json'));
  // Middles: y + height / 2 equal, heights from the drawn blocks.
  const middles = [];
  for (const b of file.blocks) middles.push(b.layout.y + (await page.getByTestId(`block-${b.id}`).boundingBox()).height / 2);
  assert.ok(Math.max(...middles) - Math.min(...middles) <= 1, `middles ${middles}`);
  assert.ok(file.blocks[0].layout.x < left, 'the left edge is the leftmost block\'s');
});

test('R turns and F mirrors the selected block; both saved, its ports on the turned sides', async () => {
  const page = await open('chain.json', 'a');
  await page.getByTestId('block-b').click();
  await page.keyboard.press('r');
  await page.keyboard.press('f');
  await page.waitForTimeout(200);
  // Mirrored then turned a quarter clockwise: the input below, the output above.
  assert.equal(await page.getByTestId('port-b-in-1').getAttribute('data-handlepos'), 'bottom');
  assert.equal(await page.getByTestId('port-b-out-1').getAttribute('data-handlepos'), 'top');
  await shot(page, 'features-rotate');
  let { file } = await save(page, 'turned.json');
  assert.equal(byId(file).b.layout.rotation, 90);
  assert.equal(byId(file).b.layout.flip, true);
  await page.getByRole('button', { name: 'Rotate' }).click();
  await page.getByRole('button', { name: 'Flip' }).click();
  ({ file } = await save(page, 'turned-2.json'));
  assert.equal(byId(file).b.layout.rotation, 180);
  assert.equal(byId(file).b.layout.flip, undefined);
  assert.equal(await page.getByTestId('port-b-in-1').getAttribute('data-handlepos'), 'right');
  // Ctrl+A selects every block: R then turns them all.
  await page.keyboard.press('Control+a');
  await page.getByTestId('status-counts').filter({ hasText: '4 selected' }).waitFor();
  await page.keyboard.press('r');
  ({ file } = await save(page, 'turned-3.json'));
  assert.deepEqual(file.blocks.map((x) => [x.id, x.layout.rotation]), [['c', 90], ['d', 90], ['a', 90], ['b', 270]]);
});

test('the palette finds a block by a word only its documentation holds, and shows that documentation', async () => {
  const page = await open('chain.json', 'a');
  const { blocks } = await (await fetch(`${shared.server.url}/api/blocks`)).json();
  const text = (b) =>
    [b.type, b.summary, ...Object.entries(b.params).flatMap(([k, p]) => [k, p.description || ''])].join(' ').toLowerCase();
  // A word of one block's parameter documentation, in no other block's text nor any type name.
  let word;
  let owner;
  for (const b of blocks) {
    for (const p of Object.values(b.params)) {
      for (const w of (p.description || '').toLowerCase().match(/[a-z]{7,}/g) || []) {
        const holders = blocks.filter((x) => text(x).includes(w));
        if (!word && holders.length === 1 && !blocks.some((x) => x.type.toLowerCase().includes(w))) [word, owner] = [w, b];
      }
    }
  }
  assert.ok(word, 'some word belongs to one block\'s documentation');
  await page.locator('.react-flow__pane').click();
  await page.keyboard.press('/');
  await page.keyboard.type(word);
  const items = page.locator('.palette-item');
  await page.getByLabel('search blocks').evaluate((e, w) => e.value === w || Promise.reject(new Error(e.value)), word);
  assert.deepEqual(await items.locator('.palette-name').allTextContents(), [owner.type]);
  await items.first().hover();
  const docs = page.getByTestId('block-docs');
  await docs.waitFor();
  const shown = await docs.textContent();
  assert.ok(shown.includes(owner.summary), 'the summary shown');
  assert.ok(shown.toLowerCase().includes(word), 'the parameter documentation holding the word shown');
  await shot(page, 'features-search');
  await page.getByLabel('search blocks').fill('no such block at all');
  await page.getByTestId('palette-empty').waitFor();
});

test('the model\'s name, description and simulation settings are edited and saved', async () => {
  const page = await open('chain.json', 'a');
  await newModel(page);
  const set = async (label, value) => {
    const field = page.getByLabel(label, { exact: true });
    await field.fill(value);
    await field.press('Enter');
  };
  await set('model name', 'Speed loop');
  await set('model description', 'A loop that holds the speed');
  // Tolerances only for the BDF, which alone reads them.
  await page.getByLabel('simulation solver').selectOption('rk4');
  assert.equal(await page.getByLabel('simulation rtol', { exact: true }).count(), 0);
  await page.getByLabel('simulation solver').selectOption('bdf');
  await set('simulation step', '0.01');
  await set('simulation stop', '5.0');
  await set('simulation rtol', '1e-7');
  await set('simulation atol', '1e-9');
  // A value the format refuses is not taken.
  await set('simulation step', '-1');
  await page.getByText('must be a number > 0').waitFor();
  await shot(page, 'features-model');
  const { file, text } = await save(page, 'settings.json');
  assert.equal(file.name, 'Speed loop');
  assert.equal(file.description, 'A loop that holds the speed');
  assert.deepEqual(file.simulation, { solver: 'bdf', step: 0.01, stop: 5, rtol: 1e-7, atol: 1e-9 });
  assert.match(text, /"stop": 5\.0/, 'number literals kept as typed');
  assert.deepEqual(Object.keys(file), ['name', 'description', 'blocks', 'links', 'simulation']);
  // The server reads the same settings.
  const check = await (
    await fetch(`${shared.server.url}/api/check`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: text })
  ).json();
  assert.deepEqual(check.simulation, { solver: 'bdf', step: 0.01, stop: 5, rtol: 1e-7, atol: 1e-9 });
});

test('redo after opening another model does nothing', async () => {
  const page = await open('chain.json', 'a');
  await page.getByTestId('block-b').click();
  await page.keyboard.press('r');
  await page.keyboard.press('Control+z');
  assert.equal(await page.getByRole('button', { name: 'Redo' }).isEnabled(), true, 'a step to redo in the first model');
  await page.getByLabel('open model').selectOption('bouncing_ball.json');
  await discardIfAsked(page);
  await page.getByTestId('block-velocity').waitFor();
  assert.equal(await page.getByRole('button', { name: 'Redo' }).isEnabled(), false);
  await page.locator('.react-flow__pane').click();
  await page.keyboard.press('Control+Shift+z');
  await page.waitForTimeout(200);
  assert.equal(await page.getByTestId('unsaved').count(), 0, 'nothing changed');
  const { text } = await save(page, 'ball.json');
  assert.equal(text, readFileSync(join(examples, 'bouncing_ball.json'), 'utf8'), 'the ball as it was opened');
});

test('the first block dropped after New lands where it was dropped', async () => {
  const page = await open('bouncing_ball.json', 'velocity');
  await newModel(page);
  const pane = page.locator('.react-flow__pane');
  const box = await pane.boundingBox();
  const drop = { x: box.x + 420, y: box.y + 260 };
  await page.getByTestId('palette-Gain').dragTo(pane, { targetPosition: { x: 420, y: 260 } });
  const block = page.getByTestId('block-gain1');
  await block.waitFor();
  const at = centre(await block.boundingBox());
  assert.ok(Math.abs(at.x - drop.x) <= 3 && Math.abs(at.y - drop.y) <= 3, `centred on the drop point: ${JSON.stringify([at, drop])}`);
  const view = await viewport(page);
  const { file } = await save(page, 'dropped.json');
  const size = await block.boundingBox();
  const saved = view.toScreen({ x: file.blocks[0].layout.x, y: file.blocks[0].layout.y });
  assert.ok(Math.abs(saved.x + size.width / 2 - drop.x) <= 3 && Math.abs(saved.y + size.height / 2 - drop.y) <= 3, 'the saved place is the drop point');
});

test('a double-clicked subsystem opens in place; a block turned inside is saved inside it', async () => {
  const page = await open('abs_slip.json', 'sliding');
  // Opened at zoom 1 from its left edge, the diagram runs past the canvas: the overview shows it whole.
  await page.locator('.react-flow__controls-fitview').click();
  await page.waitForTimeout(300);
  await page.getByTestId('block-sliding').dblclick();
  await page.getByTestId('block-falling').waitFor();
  assert.equal(await page.getByTestId('block-merge').count(), 0, 'only the subsystem\'s blocks shown');
  await page.getByTestId('block-falling').click();
  await page.keyboard.press('r');
  await page.getByRole('button', { name: 'ABS slip/adhesion curve' }).click();
  await page.getByTestId('block-merge').waitFor();
  const { file } = await save(page, 'abs-turned.json');
  const inner = byId(byId(file).sliding);
  assert.equal(inner.falling.layout.rotation, 90);
  assert.equal(byId(byId(file).adhesion).rising.layout?.rotation, undefined, 'the other subsystem untouched');
});
