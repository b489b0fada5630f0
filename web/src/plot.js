// Growing columns of rows and a uPlot chart that follows them, redrawn at
// most ten times a second; the chart as PNG or SVG.
import uPlot from 'uplot';

/** Column arrays with room for `capacity` rows, grown by doubling. */
export class Columns {
  constructor(names, capacity = 1024) {
    this.names = names;
    this.rows = 0;
    this.data = names.map(() => new Float64Array(Math.max(capacity, 16)));
  }

  /** Adds a batch from `readBatch` (rows past the end are appended). */
  add({ first, rows, columns, values }) {
    const end = first + rows;
    if (end > this.data[0].length) {
      const size = Math.max(end, this.data[0].length * 2);
      this.data = this.data.map((old) => {
        const grown = new Float64Array(size);
        grown.set(old.subarray(0, this.rows));
        return grown;
      });
    }
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < columns; c++) this.data[c][first + r] = values[r * columns + c];
    }
    this.rows = Math.max(this.rows, end);
  }

  /** The last value of column `c`. */
  last(c) {
    return this.rows > 0 ? this.data[c][this.rows - 1] : undefined;
  }

  /** uPlot's data: the filled part of every column. */
  view(from = 0) {
    return this.data.map((d) => d.subarray(from, this.rows));
  }
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];

/** A chart of `names` (time first) in `element`. */
export function chart(element, names, width = 900, height = 360) {
  const series = [{ label: names[0] }].concat(
    names.slice(1).map((n, i) => ({ label: n, stroke: COLORS[i % COLORS.length], width: 1.5 })),
  );
  return new uPlot(
    { width, height, series, scales: { x: { time: false } }, cursor: { drag: { x: true, y: false } } },
    names.map(() => []),
    element,
  );
}

/** Calls `draw` at most every 100 ms while `schedule` is called. */
export function throttled(draw) {
  let pending = false;
  let last = 0;
  return () => {
    if (pending) return;
    pending = true;
    const wait = Math.max(0, 100 - (performance.now() - last));
    setTimeout(() => {
      pending = false;
      last = performance.now();
      draw();
    }, wait);
  };
}

/** The chart's canvas as a PNG download. */
export function downloadPng(plot, name) {
  plot.ctx.canvas.toBlob((blob) => download(blob, `${name}.png`));
}

/** The shown series as an SVG download: one polyline per series. */
export function downloadSvg(columns, shown, name, width = 900, height = 360) {
  const t = columns.view()[0];
  const n = t.length;
  const step = Math.max(1, Math.floor(n / 4000));
  const [t0, t1] = [t[0], t[n - 1]];
  let lo = Infinity;
  let hi = -Infinity;
  for (const c of shown) for (let i = 0; i < n; i += step) {
    const v = columns.data[c][i];
    if (Number.isFinite(v)) [lo, hi] = [Math.min(lo, v), Math.max(hi, v)];
  }
  if (!(hi > lo)) [lo, hi] = [lo - 1, lo + 1];
  const x = (v) => (40 + ((v - t0) / (t1 - t0 || 1)) * (width - 60)).toFixed(1);
  const y = (v) => (height - 30 - ((v - lo) / (hi - lo)) * (height - 50)).toFixed(1);
  const lines = shown.map((c, k) => {
    const points = [];
    for (let i = 0; i < n; i += step) points.push(`${x(t[i])},${y(columns.data[c][i])}`);
    return `<polyline fill="none" stroke="${COLORS[(c - 1) % COLORS.length]}" stroke-width="1.5" points="${points.join(' ')}"><title>${columns.names[c]}</title></polyline>`;
  });
  const labels = `<text x="40" y="${height - 8}" font-size="12">${t0}</text><text x="${width - 60}" y="${height - 8}" font-size="12">${t1} s</text><text x="4" y="16" font-size="12">${hi.toPrecision(4)}</text><text x="4" y="${height - 30}" font-size="12">${lo.toPrecision(4)}</text>`;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="white"/>${lines.join('')}${labels}</svg>`;
  download(new Blob([svg], { type: 'image/svg+xml' }), `${name}.svg`);
}

/** Saves `blob` as `name` through the browser. */
export function download(blob, name) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}
