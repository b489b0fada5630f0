// Placing and wiring as a new user does it: blocks added by
// double-clicking the palette land on free places, a second link into an
// input already linked is refused at its drop with the reason, and the
// palette says which of Output and Outport to use; and an
// unlinked input's fix offered as actions, its note read whole.
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

test("an unlinked input's fix is offered as actions: a link from an output here, or a Constant fed in", async () => {
  const { page, server } = shared;
  await page.goto(server.url);
  for (const type of ['Constant', 'Sum']) await page.getByTestId(`palette-${type}`).dblclick();
  await page.getByTestId('block-sum1').waitFor();
  const status = page.getByTestId('check-status');
  await status.filter({ hasText: 'sum1' }).waitFor();
  const message = await status.textContent();
  assert.match(message, /^block `sum1`, port `1`: .*not connected\nFix: link an output to `sum1.1`, or feed it a Constant$/s);
  assert.doesNotMatch(message, /\{"from"/);
  // The note on the block, hovered: the whole message, above its neighbours, nothing cut.
  await page.getByTestId('block-sum1').hover();
  const note = page.getByTestId('block-sum1').getByRole('note');
  await note.waitFor();
  assert.match(await note.textContent(), /not connected\nFix: /);
  assert.ok(await note.evaluate((n) => n.scrollWidth <= n.clientWidth && n.scrollHeight <= n.clientHeight), 'the note is not cut');
  await shot(page, 'wiring-4-fix-offered');
  // Linked from the Constant, chosen in the list of outputs here.
  await page.getByLabel('link into sum1.1').selectOption('constant1');
  await status.filter({ hasText: 'port `2`' }).waitFor();
  assert.match(await page.getByTestId('status-counts').textContent(), /· 1 links/);
  // A Constant fed into the second input: a new block, linked, on a free place.
  await page.getByRole('button', { name: 'Feed a Constant' }).click();
  await page.getByTestId('block-constant2').waitFor();
  await page.getByTestId('status-counts').filter({ hasText: '3 blocks · 2 links' }).waitFor();
  await page.waitForFunction(() => !/sum1/.test(document.querySelector('[data-testid="check-status"]').textContent));
  const placed = Object.entries(await boxes(page));
  for (const [i, [a, ra]] of placed.entries()) {
    for (const [b, rb] of placed.slice(i + 1)) assert.ok(ra.right <= rb.left || rb.right <= ra.left || ra.bottom <= rb.top || rb.bottom <= ra.top, `${a} and ${b} overlap`);
  }
  await shot(page, 'wiring-5-fixed');
});
