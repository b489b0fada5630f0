// Placing and wiring as a new user does it (issue 41, 4): blocks added by
// double-clicking the palette land on free places, a second link into an
// input already linked is refused at its drop with the reason, and the
// palette says which of Output and Outport to use.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { drag, perFile, shot } from './support.mjs';

const shared = perFile(before, after);

/** The boxes of the blocks on the canvas, by id. */
const boxes = (page) =>
  page.evaluate(() =>
    Object.fromEntries(Array.from(document.querySelectorAll('.react-flow__node'), (n) => [n.dataset.id, n.getBoundingClientRect().toJSON()])),
  );

test('blocks double-clicked in the palette land apart, never on one another', async () => {
  const { page, server } = shared;
  await page.goto(server.url);
  for (const type of ['Constant', 'Gain', 'Gain', 'Sum', 'Output', 'Gain']) {
    const before = Object.keys(await boxes(page)).length;
    await page.getByTestId(`palette-${type}`).dblclick();
    await page.waitForFunction((n) => document.querySelectorAll('.react-flow__node').length === n + 1, before);
  }
  await page.waitForTimeout(300);
  const placed = Object.entries(await boxes(page));
  assert.equal(placed.length, 6);
  for (const [i, [a, ra]] of placed.entries()) {
    for (const [b, rb] of placed.slice(i + 1)) {
      const apart = ra.right <= rb.left || rb.right <= ra.left || ra.bottom <= rb.top || rb.bottom <= ra.top;
      assert.ok(apart, `${a} and ${b} overlap`);
    }
  }
  await shot(page, 'wiring-1-placed');
});

test('a second link into a linked input is refused at the drop, saying which link is there', async () => {
  const { page, server } = shared;
  await page.goto(server.url);
  for (const type of ['Constant', 'Constant', 'Gain']) await page.getByTestId(`palette-${type}`).dblclick();
  await page.getByTestId('block-gain1').waitFor();
  await page.waitForTimeout(300);
  await drag(page, page.getByTestId('port-constant1-out-1'), page.getByTestId('port-gain1-in-1'));
  await page.getByTestId('status-counts').filter({ hasText: '1 links' }).waitFor();
  await drag(page, page.getByTestId('port-constant2-out-1'), page.getByTestId('port-gain1-in-1'));
  const refused = page.getByTestId('refused');
  await refused.waitFor();
  assert.match(await refused.textContent(), /gain1's input 1 already comes from constant1; remove that link first/);
  assert.match(await page.getByTestId('status-counts').textContent(), /· 1 links/);
  assert.doesNotMatch(await page.getByTestId('check-status').textContent(), /connected twice/);
  await shot(page, 'wiring-2-refused');
});

test('the palette offers Output at the top level and says when to use Outport', async () => {
  const { page, server } = shared;
  await page.goto(server.url);
  await page.getByTestId('palette-Output').waitFor();
  assert.equal(await page.getByTestId('palette-Outport').count(), 0, 'no Outport at the top level');
  await page.getByTestId('palette-Output').hover();
  assert.match(await page.getByTestId('block-which').textContent(), /Inside a subsystem, an Outport/);
  // Inside a subsystem, both, each saying which to use.
  await page.getByTestId('palette-Subsystem').dblclick();
  await page.getByTestId('block-subsystem1').dblclick();
  await page.getByTestId('palette-Outport').waitFor();
  await page.getByTestId('palette-Outport').hover();
  assert.match(await page.getByTestId('block-which').textContent(), /At the top level use Output/);
  await shot(page, 'wiring-3-palette');
});
