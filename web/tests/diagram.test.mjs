// Diagrams as an engineer reads them: each example opened
// and fitted keeps the text on its blocks at 11 px or more on screen, a
// Gain shows its K and a Sum its signs on its face and ports, and no link
// that runs back (a feedback) goes through a block.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { perFile, shot } from './support.mjs';

const shared = perFile(before, after);

/** Opens `file` from models/examples and waits for `block` to be drawn and fitted. */
async function open(file, block) {
  const { page, server } = shared;
  await page.goto(server.url);
  await page.getByLabel('open model').selectOption(file);
  await page.getByTestId(`block-${block}`).waitFor();
  await page.waitForTimeout(500);
}

// Each example, a block of it, and whether it has feedback links.
for (const [file, block, loops] of [
  ['cruise_control.json', 'vehicle', true],
  ['ev_speed_controller.json', 'error', false],
  ['bouncing_ball.json', 'velocity', true],
]) {
  test(`${file}: text on blocks at 11 px or more once fitted, and no feedback link through a block`, async () => {
    const { page } = shared;
    await open(file, block);
    const smallest = await page.evaluate(() => {
      const texts = document.querySelectorAll('.react-flow__node .block-id, .react-flow__node .block-type, .react-flow__node .block-face, .react-flow__node .port-label');
      // Rendered size: the font size times the canvas's zoom (its transform).
      const zoom = new DOMMatrix(getComputedStyle(document.querySelector('.react-flow__viewport')).transform).a;
      return Math.min(...Array.from(texts, (t) => parseFloat(getComputedStyle(t).fontSize) * zoom));
    });
    assert.ok(smallest >= 11, `the smallest text on a block is ${smallest.toFixed(1)} px`);
    // Every link that runs back (a feedback), sampled along its path, stays out of every block.
    const crossings = await page.evaluate(() => {
      const boxes = Array.from(document.querySelectorAll('.react-flow__node'), (n) => ({ id: n.dataset.id, r: n.getBoundingClientRect() }));
      const out = [];
      let feedback = 0;
      for (const edge of document.querySelectorAll('.react-flow__edge')) {
        const path = edge.querySelector('path.link');
        const m = path.getScreenCTM();
        const length = path.getTotalLength();
        if (path.getPointAtLength(length).x >= path.getPointAtLength(0).x) continue;
        feedback += 1;
        for (let s = 0; s <= length; s += 3) {
          const p = path.getPointAtLength(s);
          const [x, y] = [m.a * p.x + m.c * p.y + m.e, m.b * p.x + m.d * p.y + m.f];
          const inside = boxes.find(({ r }) => x > r.left + 4 && x < r.right - 4 && y > r.top + 4 && y < r.bottom - 4);
          if (inside) {
            out.push(`${edge.dataset.testid} through ${inside.id}`);
            break;
          }
        }
      }
      return { out, feedback };
    });
    assert.equal(crossings.feedback > 0, loops, `${crossings.feedback} feedback links`);
    assert.deepEqual(crossings.out, []);
    await shot(page, `diagram-${file.replace('.json', '')}`);
  });
}

test("a Gain shows its K, a Sum its signs, on the block's face and ports", async () => {
  const { page } = shared;
  await open('cruise_control.json', 'vehicle');
  assert.equal(await page.getByTestId('face-speed_map').textContent(), 'K = 50.0', 'the number as the file writes it');
  assert.equal(await page.getByTestId('face-error').textContent(), '+-');
  assert.equal(await page.getByTestId('label-error-in-1').textContent(), '+');
  assert.equal(await page.getByTestId('label-error-in-2').textContent(), '−');
});
