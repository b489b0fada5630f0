// The envelope against a brute-force pass over the same rows: every pixel
// column's extremes, in the order they occurred, whether the rows come in
// one batch or many; and the rows themselves when they are few.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Columns, Envelope, visible } from './envelope.js';

/** `n` rows of time, sin(2πft)·a and a ramp, added in batches of `batch`. */
function rows(n, step, batch = n) {
  const columns = new Columns(['time', 'sine', 'ramp'], 16);
  for (let first = 0; first < n; first += batch) {
    const count = Math.min(batch, n - first);
    const values = new Float64Array(count * 3);
    for (let r = 0; r < count; r++) {
      const t = (first + r) * step;
      values.set([t, 2.5 * Math.sin(2 * Math.PI * 10 * t), t * 0.5], r * 3);
    }
    columns.add({ first, rows: count, columns: 3, values });
  }
  return columns;
}

/** Per non-empty column of `width` over [x0, x1]: [first t, last t, per series [min, max]]. */
function brute(columns, x0, x1, width) {
  const out = new Map();
  for (let r = 0; r < columns.rows; r++) {
    const t = columns.data[0][r];
    const b = Math.min(width - 1, Math.max(0, Math.floor(((t - x0) * width) / (x1 - x0))));
    const entry = out.get(b) ?? { first: t, last: t, series: [1, 2].map(() => [Infinity, -Infinity]) };
    entry.last = t;
    for (const c of [1, 2]) {
      const v = columns.data[c][r];
      entry.series[c - 1] = [Math.min(entry.series[c - 1][0], v), Math.max(entry.series[c - 1][1], v)];
    }
    out.set(b, entry);
  }
  return [...out.values()];
}

function check(data, expected) {
  assert.equal(data[0].length, 2 * expected.length);
  expected.forEach((e, k) => {
    assert.equal(data[0][2 * k], e.first);
    assert.equal(data[0][2 * k + 1], e.last);
    for (const c of [1, 2]) {
      const pair = [data[c][2 * k], data[c][2 * k + 1]];
      assert.deepEqual([Math.min(...pair), Math.max(...pair)], e.series[c - 1], `column ${k}, series ${c}`);
    }
  });
}

test('the envelope holds each pixel column’s minimum and maximum', () => {
  const columns = rows(100001, 0.001);
  const envelope = new Envelope(2, 0, 100, 640);
  envelope.add(columns, 0, columns.rows);
  check(envelope.data, brute(columns, 0, 100, 640));
  // A sine of amplitude 2.5 at 10 Hz sweeps its whole range in every column.
  for (let k = 0; k < envelope.data[0].length; k += 2) {
    const pair = [envelope.data[1][k], envelope.data[1][k + 1]];
    assert.ok(Math.abs(Math.min(...pair) + 2.5) < 2e-3 && Math.abs(Math.max(...pair) - 2.5) < 2e-3, `column ${k / 2}: ${pair}`);
  }
});

test('rows streamed in batches give the envelope of one batch', () => {
  const whole = rows(50000, 0.002);
  const streamed = rows(50000, 0.002, 777);
  const once = new Envelope(2, 0, 100, 300);
  once.add(whole, 0, whole.rows);
  const piecewise = new Envelope(2, 0, 100, 300);
  for (let r = 0; r < streamed.rows; r += 333) piecewise.add(streamed, r, Math.min(r + 333, streamed.rows));
  assert.deepEqual(piecewise.data, once.data);
});

test('the extremes keep the order they occurred in', () => {
  const ramp = rows(1000, 0.01);
  const envelope = new Envelope(2, 0, 10, 10);
  envelope.add(ramp, 0, ramp.rows);
  // Rising: each column's minimum came first.
  for (let k = 0; k < envelope.data[0].length; k += 2) assert.ok(envelope.data[2][k] < envelope.data[2][k + 1]);
  // Falling: the maximum came first.
  const falling = new Columns(['time', 'down'], 16);
  const values = new Float64Array(2000);
  for (let r = 0; r < 1000; r++) values.set([r * 0.01, -r], r * 2);
  falling.add({ first: 0, rows: 1000, columns: 2, values });
  const down = new Envelope(1, 0, 10, 10);
  down.add(falling, 0, falling.rows);
  for (let k = 0; k < down.data[0].length; k += 2) assert.ok(down.data[1][k] > down.data[1][k + 1], `column ${k / 2}`);
});

test('a zoomed range of few rows shows the rows themselves, one beyond each edge', () => {
  const columns = rows(100001, 0.001);
  const data = visible(columns, 10, 10.5, 800);
  const t = data[0];
  const n = t.length;
  assert.ok(t[0] < 10 && t[1] >= 10 && t[n - 2] < 10.5 && t[n - 1] >= 10.5, `${t[0]} ${t[1]} … ${t[n - 2]} ${t[n - 1]}`);
  const first = Math.round(t[0] / 0.001);
  assert.equal(n, 502);
  assert.deepEqual(data[1], Array.from(columns.data[1].subarray(first, first + n)));
  const wide = visible(columns, 10, 60, 800);
  assert.ok(wide[0].length <= 1600);
  check(wide, brute({ ...columns, rows: columns.lowerBound(60) + 1 - 9999, data: columns.data.map((d) => d.subarray(9999)) }, 10, 60, 800));
});

test('the nearest row to a time', () => {
  const columns = rows(11, 0.1);
  assert.equal(columns.nearest(0.34), 3);
  assert.equal(columns.nearest(0.36), 4);
  assert.equal(columns.nearest(-5), 0);
  assert.equal(columns.nearest(50), 10);
});

test("each column's size is its largest finite magnitude so far", () => {
  const columns = new Columns(['time', 'a'], 16);
  columns.add({ first: 0, rows: 3, columns: 2, values: new Float64Array([0, -3, 1, 2, 2, NaN]) });
  assert.deepEqual(Array.from(columns.size), [2, 3]);
  columns.add({ first: 3, rows: 2, columns: 2, values: new Float64Array([3, -Infinity, 4, 5]) });
  assert.deepEqual(Array.from(columns.size), [4, 5]);
});
