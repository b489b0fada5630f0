// Rows kept at full resolution, and what a chart of W pixel columns shows
// of them: per column, the minimum and the maximum of every series (an
// envelope), built as rows stream in or again for a zoomed range. The
// envelope draws the same pixels as every row would, at a cost bounded by
// the width instead of the row count.

/**
 * Column arrays with room for `capacity` rows, grown by doubling, and each
 * column's largest finite magnitude so far (`size`, the scale its values
 * are read against).
 */
export class Columns {
  constructor(names, capacity = 1024) {
    this.names = names;
    this.rows = 0;
    this.data = names.map(() => new Float64Array(Math.max(capacity, 16)));
    this.size = new Float64Array(names.length);
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
    const width = Math.min(columns, this.data.length);
    for (let c = 0; c < width; c++) {
      const column = this.data[c];
      let size = this.size[c];
      for (let r = 0, i = c; r < rows; r++, i += columns) {
        const v = values[i];
        column[first + r] = v;
        const a = v < 0 ? -v : v;
        if (a > size && a !== Infinity) size = a;
      }
      this.size[c] = size;
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

  /** The first row whose time is at least `t` (times never decrease). */
  lowerBound(t) {
    const time = this.data[0];
    let [lo, hi] = [0, this.rows];
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (time[mid] < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The row whose time is nearest `t` (-1 when there is none). */
  nearest(t) {
    if (this.rows === 0) return -1;
    const i = this.lowerBound(t);
    if (i === 0) return 0;
    if (i === this.rows) return this.rows - 1;
    const time = this.data[0];
    return t - time[i - 1] <= time[i] - t ? i - 1 : i;
  }
}

/**
 * The envelope of rows over the times [x0, x1] in `width` pixel columns:
 * for every column that holds rows, two points, at the time of its first
 * and its last row, carrying each series' extremes in the order they
 * occurred (so a column of one row repeats it). `add` takes rows in time
 * order, so only the last column is ever still open; `data` is what
 * uPlot draws (null where a column holds no finite value of a series).
 */
export class Envelope {
  constructor(series, x0, x1, width) {
    this.series = series;
    this.x0 = x0;
    this.x1 = x1;
    this.width = Math.max(1, Math.floor(width));
    this.scale = x1 > x0 ? this.width / (x1 - x0) : 0;
    this.bucket = -1;
    this.points = 0;
    this.data = Array.from({ length: series + 1 }, () => []);
    // The open column: per series, its extremes and the rows they came from.
    this.low = new Float64Array(series + 1);
    this.high = new Float64Array(series + 1);
    this.lowAt = new Float64Array(series + 1);
    this.highAt = new Float64Array(series + 1);
  }

  /** The pixel column of time `t` (times past the range end in the last). */
  column(t) {
    const b = Math.floor((t - this.x0) * this.scale);
    return b < 0 ? 0 : b >= this.width ? this.width - 1 : b;
  }

  /** Adds rows `from` to `to` (excluded) of `columns`, in time order. */
  add(columns, from, to) {
    const data = columns.data;
    const time = data[0];
    const n = this.series;
    for (let r = from; r < to; r++) {
      const t = time[r];
      const b = this.column(t);
      if (b !== this.bucket) {
        if (this.bucket >= 0 && r > from) this.close(time[r - 1]);
        this.bucket = b;
        this.points += 2;
        this.data[0].push(t, t);
        for (let c = 1; c <= n; c++) {
          const v = data[c][r];
          const finite = Number.isFinite(v);
          this.low[c] = finite ? v : Infinity;
          this.high[c] = finite ? v : -Infinity;
          this.lowAt[c] = r;
          this.highAt[c] = r;
        }
      } else {
        for (let c = 1; c <= n; c++) {
          const v = data[c][r];
          if (v < this.low[c]) {
            this.low[c] = v;
            this.lowAt[c] = r;
          }
          if (v > this.high[c]) {
            this.high[c] = v;
            this.highAt[c] = r;
          }
        }
      }
    }
    if (to > from && this.bucket >= 0) this.close(time[to - 1]);
  }

  /** Writes the open column's points (it may still grow). */
  close(last) {
    const k = this.points - 2;
    this.data[0][k + 1] = last;
    for (let c = 1; c <= this.series; c++) {
      const [lo, hi] = [this.low[c], this.high[c]];
      const some = lo <= hi;
      const lowFirst = this.lowAt[c] <= this.highAt[c];
      this.data[c][k] = some ? (lowFirst ? lo : hi) : null;
      this.data[c][k + 1] = some ? (lowFirst ? hi : lo) : null;
    }
  }
}

/**
 * What a chart `width` pixels wide shows of `columns` between the times
 * x0 and x1: the rows themselves (and one on either side, so lines run to
 * the edges) when there are at most two per pixel, else their envelope.
 */
export function visible(columns, x0, x1, width) {
  const from = Math.max(0, columns.lowerBound(x0) - 1);
  const to = Math.min(columns.rows, columns.lowerBound(x1) + 1);
  if (to - from <= 2 * width) return columns.data.map((d) => Array.from(d.subarray(from, to)));
  const envelope = new Envelope(columns.names.length - 1, x0, x1, width);
  envelope.add(columns, from, to);
  return envelope.data;
}
