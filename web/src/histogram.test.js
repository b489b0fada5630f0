// The log-binned histogram against bins counted by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countTicks, latencyTicks, logBins } from './histogram.js';

test('buckets gather into bins of equal log width over whole decades', () => {
  // 14 µs .. 54 µs: one decade, 10 µs to 100 µs, five bins of a factor 10^0.2 (1.585).
  const h = logBins([[14000, 1], [15000, 5], [16000, 13], [25000, 9], [54000, 1]]);
  assert.equal(h.lo, 4);
  assert.equal(h.hi, 5);
  assert.equal(h.bins.length, 5);
  // 10^4.2 = 15849: 14000 and 15000 in the first bin, 16000 in the second (to 25119), 25000 too, 54000 in the fourth (39811..63096).
  assert.deepEqual(h.bins.map((b) => b.count), [6, 22, 0, 1, 0]);
  assert.equal(h.top, 22);
  assert.ok(Math.abs(h.bins[1].from - 10 ** 4.2) < 1e-6);
});

test('zero latencies fall in the first bin, an exact power of ten opens its decade', () => {
  const h = logBins([[0, 3], [1000, 2]]);
  assert.equal(h.lo, 0);
  assert.equal(h.hi, 4);
  assert.equal(h.bins[0].count, 3);
  assert.equal(h.bins[3 * 5].count, 2);
  assert.equal(logBins([[5, 0]]), null);
  assert.equal(logBins(undefined), null);
});

test('ticks are powers of ten', () => {
  assert.deepEqual(countTicks(3), [1, 10]);
  assert.deepEqual(countTicks(10), [1, 10]);
  assert.deepEqual(countTicks(11), [1, 10, 100]);
  assert.deepEqual(latencyTicks(3, 5), [1000, 10000, 100000]);
});
