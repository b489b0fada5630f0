// A latency histogram on logarithmic axes: the server's fine buckets
// ([upper_ns, count], empty ones left out) gathered into bins of equal
// width in log10(latency), and the power-of-ten ticks of both axes.

/** Bins per decade of latency. */
export const PER_DECADE = 5;

/**
 * The buckets gathered into log bins: `{lo, hi, bins: [{from, to, count}],
 * top}` with `lo`..`hi` the decades spanned (10^lo ns to 10^hi ns, at least
 * one decade), `from`/`to` each bin's bounds in ns, `top` the largest bin's
 * count. Latencies below 1 ns fall in the first bin. Null without counts.
 */
export function logBins(buckets, perDecade = PER_DECADE) {
  const counted = (buckets || []).filter(([, c]) => c > 0);
  if (counted.length === 0) return null;
  const logs = counted.map(([v]) => Math.log10(Math.max(v, 1)));
  const lo = Math.floor(Math.min(...logs));
  const hi = Math.max(lo + 1, Math.floor(Math.max(...logs)) + 1);
  const bins = Array.from({ length: (hi - lo) * perDecade }, (_, i) => ({
    from: 10 ** (lo + i / perDecade),
    to: 10 ** (lo + (i + 1) / perDecade),
    count: 0,
  }));
  counted.forEach(([, c], k) => {
    const i = Math.min(bins.length - 1, Math.floor((logs[k] - lo) * perDecade + 1e-9));
    bins[i].count += c;
  });
  return { lo, hi, bins, top: Math.max(...bins.map((b) => b.count)) };
}

/** The count axis' ticks: 1, 10, 100, … up to the first power of ten at or above `top` (at least 10). */
export function countTicks(top) {
  const ticks = [1, 10];
  while (ticks[ticks.length - 1] < top) ticks.push(ticks[ticks.length - 1] * 10);
  return ticks;
}

/** The latency axis' ticks (ns): the powers of ten from 10^lo to 10^hi. */
export function latencyTicks(lo, hi) {
  return Array.from({ length: hi - lo + 1 }, (_, i) => 10 ** (lo + i));
}
