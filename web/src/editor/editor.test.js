// The editor's pure parts: layout, clipboard, alignment, turning, ports
// of turned blocks, palette search and error messages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { align, clip, layered, paste, readClip, turn } from '../model.js';
import { blockSize, portPlaces } from './geometry.js';
import { searchLibrary } from './categories.js';
import { describeError, plainSyntax, unreadable } from './errors.js';
import { parseModel } from '../format.js';

const size = () => ({ width: 120, height: 60 });

test('a chain is laid out left to right, in link order, whatever the block order', () => {
  const d = {
    blocks: ['c', 'a', 'd', 'b'].map((id) => ({ id, type: 'Gain' })),
    links: [
      { from: 'a', to: 'b' },
      { from: 'b', to: 'c' },
      { from: 'c', to: ['d', 'b.2'] },
    ],
  };
  const at = layered(d, size);
  assert.ok(at.a.x < at.b.x && at.b.x < at.c.x && at.c.x < at.d.x, JSON.stringify(at));
});

test('pasting gives taken ids the next free number and keeps only inner links', () => {
  const d = {
    blocks: [
      { id: 'gain1', type: 'Gain', layout: { x: 0, y: 0 } },
      { id: 'sum', type: 'Sum' },
      { id: 'out', type: 'Output' },
    ],
    links: [
      { from: 'gain1', to: ['sum.1', 'out'] },
      { from: 'sum', to: 'gain1' },
    ],
  };
  const data = readClip(clip(d, ['gain1', 'sum']));
  assert.deepEqual(data.links.map((l) => [l.from, l.to]), [
    ['gain1', ['sum.1']],
    ['sum', 'gain1'],
  ]);
  const ids = paste(d, data);
  assert.deepEqual(ids, ['gain2', 'sum2']);
  assert.deepEqual(d.links.slice(2).map((l) => [l.from, l.to]), [
    ['gain2', ['sum2.1']],
    ['sum2', 'gain2'],
  ]);
  assert.deepEqual(d.blocks[3].layout, { x: 40, y: 40 });
  assert.equal(readClip('{"blocks": []}'), null);
  assert.equal(readClip('not json'), null);
  // Clipboard text from elsewhere: ids that are not strings, links missing or leading out.
  assert.equal(readClip('{"tandem": "blocks", "blocks": [{"id": 7, "type": "Gain"}]}'), null);
  const loose = readClip(
    '{"tandem": "blocks", "blocks": [{"id": "a", "type": "Gain"}, {"id": "b", "type": "Gain"}], "links": [{"from": "a", "to": "b"}, {"from": "a", "to": "elsewhere"}, {"from": 3, "to": "b"}, null]}',
  );
  assert.deepEqual(loose.links, [{ from: 'a', to: 'b' }]);
  assert.deepEqual(readClip('{"tandem": "blocks", "blocks": [{"id": "a", "type": "Gain"}]}').links, []);
});

test('align puts edges and centres on the selection\'s box', () => {
  const d = { blocks: [{ id: 'a', layout: { x: 10, y: 5 } }, { id: 'b', layout: { x: 100, y: 50 } }] };
  const box = (b) => ({ x: b.layout.x, y: b.layout.y, width: b.id === 'a' ? 100 : 50, height: 40 });
  align(d, ['a', 'b'], 'right', box);
  assert.deepEqual(d.blocks.map((b) => b.layout.x + (b.id === 'a' ? 100 : 50)), [150, 150]);
  align(d, ['a', 'b'], 'top', box);
  assert.deepEqual(d.blocks.map((b) => b.layout.y), [5, 5]);
});

test('turning and mirroring move the ports to the sides they face', () => {
  const b = { id: 'i', type: 'Integrator' };
  const ports = { inputs: ['in', 'reset'], outputs: ['1'] };
  const sides = () => portPlaces(b, ports).map((p) => `${p.name}:${p.side}`);
  assert.deepEqual(sides(), ['in:left', 'reset:left', '1:right']);
  turn(b, 'rotate', { x: 3, y: 4 });
  assert.deepEqual(b.layout, { x: 3, y: 4, rotation: 90 });
  assert.deepEqual(sides(), ['in:top', 'reset:top', '1:bottom']);
  turn(b, 'flip', {});
  assert.deepEqual(sides(), ['in:bottom', 'reset:bottom', '1:top']);
  for (let i = 0; i < 3; i++) turn(b, 'rotate', {});
  assert.deepEqual(b.layout, { x: 3, y: 4, flip: true });
  assert.deepEqual(sides(), ['in:right', 'reset:right', '1:left']);
  const wide = blockSize(b, ports);
  turn(b, 'rotate', {});
  const tall = blockSize(b, ports);
  assert.ok(wide.width > wide.height && tall.height >= 56, JSON.stringify([wide, tall]));
});

test('the palette finds a block by a word of a parameter\'s description', () => {
  const library = [
    { type: 'Gain', summary: 'y = gain u', params: { gain: { description: 'the factor' } } },
    { type: 'Sum', summary: 'adds', params: { signs: { description: 'one sign per input' } } },
  ];
  assert.deepEqual(searchLibrary(library, 'factor').flatMap((c) => c.blocks.map((b) => b.type)), ['Gain']);
  assert.deepEqual(searchLibrary(library, 'sign').map((c) => c.name), ['Math']);
});

test('errors name the block and port, without a line:column', () => {
  const json = {
    error: '1:13: block "velocity": (Integrator) input 1 ("in") is not connected\n  help: add a link',
    kind: 'Unconnected',
    place: { block: 'velocity', port: 'in', line: 1, column: 13 },
  };
  assert.equal(describeError(json), 'block `velocity`, port `in`: (Integrator) input 1 ("in") is not connected\nFix: add a link');
  assert.equal(
    plainSyntax('1:21: invalid model JSON: EOF while parsing a value at line 1 column 21'),
    'The model is not valid JSON (line 1, column 21): the text ends before the model is complete.',
  );
});

test('a file that does not parse is described by line, column and what was expected', () => {
  const text = '{\n  "name": "m",\n  "blocks": [1 2]\n}';
  let error;
  try {
    parseModel(text);
  } catch (e) {
    error = e;
  }
  // Line 3 is `  "blocks": [1 2]`: the 2 is its 16th character.
  assert.equal(unreadable(text, error), "The file is not valid JSON (line 3, column 16): comma ',' expected after value but got '2'.");
});

test("a block's face shows its key parameter, a Sum's inputs their signs", async () => {
  const { faceOf, inputLabel, short } = await import('./face.js');
  assert.equal(faceOf({ type: 'Gain', params: { gain: 50 } }), 'K = 50');
  assert.equal(faceOf({ type: 'Sum', params: { signs: '+-' } }), '+-');
  assert.equal(faceOf({ type: 'Constant', params: { value: [1, 2, 3, 4] } }), '[1, 2, 3, …]');
  assert.equal(faceOf({ type: 'Saturation', params: { lower: -1, upper: 1 } }), '[-1, 1]');
  assert.equal(faceOf({ type: 'PID', params: { kp: 2, ki: 0.5 } }), 'P 2  I 0.5');
  assert.equal(faceOf({ type: 'Output', params: { unit: 'm/s' } }), '[m/s]');
  assert.equal(faceOf({ type: 'Gain' }), '', 'a parameter not set shows nothing');
  assert.equal(faceOf({ type: 'Abs', params: {} }), '');
  assert.equal(inputLabel({ type: 'Sum', params: { signs: '+-' } }, '2', 1), '−');
  assert.equal(inputLabel({ type: 'Sum', params: { signs: '+-' } }, '1', 0), '+');
  assert.equal(inputLabel({ type: 'Product', params: { ops: '*/' } }, '2', 1), '÷');
  assert.equal(inputLabel({ type: 'Gain', params: {} }, 'in', 0), 'in');
  assert.equal(short('x'.repeat(40)).length, 22);
  assert.equal(faceOf({ type: 'Gain', params: { gain: 1 / 1500 } }), 'K = 0.0006667');
  assert.equal(short(123456789), '123500000');
  // Numbers keep the literal the file wrote (lossless-json's numbers).
  assert.equal(short({ isLosslessNumber: true, toString: () => '1e-3' }), '1e-3');
});

test('a feedback link is routed around the blocks between its ends, the shorter way', async () => {
  const { feedbackRoute } = await import('./geometry.js');
  const boxes = [
    { x: 0, y: 0, width: 100, height: 60 },
    { x: 200, y: 10, width: 100, height: 60 },
  ];
  // From the right block's output back to the left block's input: below both.
  const route = feedbackRoute(boxes, { x: 300, y: 40 }, { x: 0, y: 30 });
  assert.deepEqual(route, [
    { x: 300, y: 40 },
    { x: 318, y: 40 },
    { x: 318, y: 88 },
    { x: -18, y: 88 },
    { x: -18, y: 30 },
    { x: 0, y: 30 },
  ]);
  // Nearer the top: above them.
  assert.equal(feedbackRoute(boxes, { x: 300, y: 12 }, { x: 0, y: 5 })[2].y, -18);
  // A block in the way of the line below counts: then the way above is the shorter.
  assert.equal(feedbackRoute(boxes, { x: 300, y: 50 }, { x: 0, y: 45 })[2].y, 88);
  const below = [...boxes, { x: 120, y: 80, width: 50, height: 40 }];
  assert.equal(feedbackRoute(below, { x: 300, y: 50 }, { x: 0, y: 45 })[2].y, -18);
  // Down and back to a block of another row, past none: drawn as before.
  assert.equal(feedbackRoute(boxes, { x: 300, y: 40 }, { x: 120, y: 300 }), null);
  // A link that runs forward is drawn as before.
  assert.equal(feedbackRoute(boxes, { x: 100, y: 30 }, { x: 200, y: 40 }), null);
});

test('a block added from the palette goes to the nearest free place', async () => {
  const { freeSpot } = await import('./geometry.js');
  const size = { width: 100, height: 50 };
  assert.deepEqual(freeSpot([], size, { x: 50, y: 25 }), { x: 0, y: 0 }, 'an empty canvas: where asked');
  const taken = [{ x: 0, y: 0, width: 100, height: 50 }];
  const spot = freeSpot(taken, size, { x: 50, y: 25 });
  assert.ok(spot.x >= 124 || spot.x <= -124 || spot.y >= 74 || spot.y <= -74, `clear of the block: ${JSON.stringify(spot)}`);
  assert.ok(Math.hypot(spot.x, spot.y) <= 130, 'and near it');
  // Again and again: each new block clear of all the others.
  const boxes = [...taken];
  for (let k = 0; k < 12; k++) {
    const s = freeSpot(boxes, size, { x: 50, y: 25 });
    for (const b of boxes) assert.ok(s.x + 100 <= b.x || b.x + b.width <= s.x || s.y + 50 <= b.y || b.y + b.height <= s.y, `block ${k} overlaps`);
    boxes.push({ ...s, ...size });
  }
});

test('a fix that names a link in JSON says it in words', () => {
  const json = {
    error: '8:6: block "error": (Sum) input 2 ("2") is not connected\n  help: add a link {"from": "<block>.<port>", "to": "error.2"}, or feed it a Constant',
    kind: 'Unconnected',
    place: { block: 'error', port: '2', line: 8, column: 6 },
  };
  assert.equal(describeError(json), 'block `error`, port `2`: (Sum) input 2 ("2") is not connected\nFix: link an output to `error.2`, or feed it a Constant');
});
