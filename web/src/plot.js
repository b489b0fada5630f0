// uPlot charts in the page's theme: the outputs' units from the model (one
// y axis per unit, titled with its signals), redraws throttled while rows
// stream in, and the chart as PNG or SVG.
import uPlot from 'uplot';

export { Columns } from './envelope.js';

/** Radix scales the series take their colours from, in order. */
const HUES = ['blue', 'tomato', 'grass', 'amber', 'violet', 'cyan', 'pink', 'brown'];

/**
 * The theme's colours and font as the canvas needs them (it cannot read
 * CSS variables): read from `element`, so light and dark both follow.
 */
export function palette(element) {
  const style = getComputedStyle(element);
  const get = (name) => style.getPropertyValue(name).trim();
  return {
    text: get('--gray-11'),
    grid: get('--gray-a4'),
    tick: get('--gray-a6'),
    background: get('--color-panel-solid') || 'white',
    font: style.fontFamily || 'sans-serif',
    series: HUES.map((h) => get(`--${h}-10`) || '#1f77b4'),
  };
}

/**
 * The unit of every output of a model document, by its column name: the
 * `unit` param of each `Output` block (named by its path inside
 * subsystems) and of each top-level `Outport`.
 */
export function outputUnits(doc) {
  const units = {};
  const walk = (blocks, prefix) => {
    for (const b of blocks ?? []) {
      if (b.type === 'Output' || (prefix === '' && b.type === 'Outport')) units[prefix + b.id] = String(b.params?.unit ?? '');
      if (b.type === 'Subsystem') walk(b.blocks, `${prefix}${b.id}/`);
    }
  };
  walk(doc?.blocks, '');
  return units;
}

/** The unit of column `name` (`id[k]` is an element of output `id`). */
export function unitOf(units, name) {
  return units[name] ?? units[name.replace(/\[\d+\]$/, '')] ?? '';
}

/** The columns (by index, time excluded) grouped by unit, in order of first appearance. */
export function byUnit(names, units) {
  const groups = [];
  names.slice(1).forEach((name, i) => {
    const unit = unitOf(units, name);
    const group = groups.find((g) => g.unit === unit) ?? groups[groups.push({ unit, columns: [] }) - 1];
    group.columns.push(i + 1);
  });
  return groups;
}

/**
 * An axis title: its signals, then its unit in brackets, in at most `room`
 * characters: as many signals as fit (the rest as "…"), else the unit
 * alone, so that no title is cut where the axis ends.
 */
export function axisTitle(names, unit, room = Infinity) {
  const withUnit = (list) => (unit ? `${list} [${unit}]` : list);
  for (let k = names.length; k > 0; k--) {
    const title = withUnit(k === names.length ? names.join(', ') : `${names.slice(0, k).join(', ')}, …`);
    if (title.length <= room) return title;
  }
  return unit ? `[${unit}]` : '';
}

/** The characters an axis title of 11 px has along a y axis of a chart `height` pixels high. */
export const titleRoom = (height) => Math.floor((height - 50) / 6.5);

/**
 * A y axis's range for values from `min` to `max`: uPlot's own, except
 * that a spread below 1e-9 of their size (numerical noise on a constant,
 * such as a state of charge of 80 ± 1e-14) is drawn flat, as the constant;
 * uPlot's ticks would otherwise step by less than a double resolves there
 * and never end.
 */
export function unitRange(min, max) {
  if (min == null || max == null) return [min, max];
  if (max - min < 1e-9 * Math.max(Math.abs(min), Math.abs(max))) min = max = (min + max) / 2;
  return uPlot.rangeNum(min, max, 0.1, true);
}

/**
 * A chart of `names` (time first) in `element`. `options`: `units` (by
 * column name) gives one y axis per unit; `shown` (column indices) the
 * series drawn; `colors` from `palette`; `legend: false` for a legend of
 * one's own; `x` a function giving the x range to show; `cursor` and
 * `hooks` are uPlot's.
 */
export function chart(element, names, width = 900, height = 360, options = {}) {
  const { units = {}, shown, legend = true, x, cursor, hooks } = options;
  const colors = options.colors ?? palette(element);
  const groups = byUnit(names, units);
  const axisFont = `11px ${colors.font}`;
  const titleFont = `600 11px ${colors.font}`;
  const axis = { stroke: colors.text, font: axisFont, labelFont: titleFont, labelSize: 18, labelGap: 2 };
  const series = [{ label: names[0] }].concat(
    names.slice(1).map((n, i) => ({
      label: n,
      stroke: colors.series[i % colors.series.length],
      width: 1.5,
      scale: `unit:${unitOf(units, n)}`,
      show: shown ? shown.includes(i + 1) : true,
      points: { show: false },
    })),
  );
  const scales = { x: { time: false, ...(x ? { range: () => x() } : {}) } };
  const axes = [
    { ...axis, label: 'time [s]', grid: { stroke: colors.grid, width: 1 }, ticks: { stroke: colors.tick, width: 1 } },
  ];
  groups.forEach((g, k) => {
    const key = `unit:${g.unit}`;
    scales[key] = { auto: true, range: (u, min, max) => unitRange(min, max) };
    axes.push({
      ...axis,
      scale: key,
      side: k % 2 === 0 ? 3 : 1,
      label: axisTitle(g.columns.map((c) => names[c]), g.unit, titleRoom(height)),
      grid: { show: k === 0, stroke: colors.grid, width: 1 },
      ticks: { stroke: colors.tick, width: 1 },
      size: 56,
    });
  });
  return new uPlot(
    {
      width,
      height,
      series,
      scales,
      axes,
      legend: { show: legend },
      cursor: cursor ?? { drag: { x: true, y: false } },
      hooks: hooks ?? {},
    },
    names.map(() => []),
    element,
  );
}

/**
 * Calls `draw` at most every `interval` ms while the returned function is
 * called; its `cancel()` drops a draw still waiting.
 */
export function throttled(draw, interval = 100) {
  let timer = null;
  let last = 0;
  const request = () => {
    if (timer !== null) return;
    timer = setTimeout(() => {
      timer = null;
      last = performance.now();
      draw();
    }, Math.max(0, interval - (performance.now() - last)));
  };
  request.cancel = () => {
    clearTimeout(timer);
    timer = null;
  };
  return request;
}

/**
 * The key drawn into exported images: each shown series' colour and name,
 * in a row from the plot area's top left corner (CSS pixels).
 */
function key(plot) {
  const ratio = uPlot.pxRatio;
  let x = plot.bbox.left / ratio + 10;
  const y = plot.bbox.top / ratio + 14;
  const out = [];
  plot.series.forEach((s, c) => {
    if (c === 0 || !s.show) return;
    out.push({ x, y, color: s.stroke(plot, c), label: String(s.label) });
    x += 30 + 7 * String(s.label).length;
  });
  return out;
}

/** The chart's canvas on the panel's colour, with its key, as a PNG blob. */
export function pngOf(plot, colors) {
  const source = plot.ctx.canvas;
  const ratio = uPlot.pxRatio;
  const canvas = document.createElement('canvas');
  [canvas.width, canvas.height] = [source.width, source.height];
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = colors.background;
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.drawImage(source, 0, 0);
  ctx.scale(ratio, ratio);
  ctx.font = `11px ${colors.font}`;
  ctx.textBaseline = 'middle';
  for (const k of key(plot)) {
    ctx.fillStyle = k.color;
    ctx.fillRect(k.x, k.y - 1, 16, 2);
    ctx.fillStyle = colors.text;
    ctx.fillText(k.label, k.x + 20, k.y);
  }
  return new Promise((ok) => canvas.toBlob(ok, 'image/png'));
}

/** Round steps (1, 2 or 5 × 10^k) from `lo` to `hi`, about `count` of them. */
export function ticks(lo, hi, count = 6) {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw);
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)) || 0);
  return out;
}

const escape = (s) => String(s).replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The chart as it is shown, as SVG text: the plot area, one polyline per
 * shown series (the points the chart holds: the rows, or their envelope),
 * the time axis and one axis per unit, with their titles, and a key.
 */
export function svgOf(plot, colors) {
  const [width, height] = [plot.width, plot.height];
  const ratio = uPlot.pxRatio;
  const box = { left: plot.bbox.left / ratio, top: plot.bbox.top / ratio, width: plot.bbox.width / ratio, height: plot.bbox.height / ratio };
  const t = plot.data[0];
  const parts = [`<rect width="100%" height="100%" fill="${escape(colors.background)}"/>`];
  const text = (x, y, s, anchor = 'middle', extra = '') =>
    `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}" text-anchor="${anchor}" ${extra}>${escape(s)}</text>`;
  // Axes: ticks and titles from the chart's own scales.
  plot.axes.forEach((axis, k) => {
    if (axis.show === false) return;
    const key = axis.scale ?? 'x';
    const { min, max } = plot.scales[key];
    if (min == null || max == null) return;
    if (key === 'x') {
      const y = box.top + box.height;
      for (const v of ticks(min, max)) {
        const px = box.left + plot.valToPos(v, 'x');
        parts.push(`<line x1="${px.toFixed(1)}" y1="${box.top}" x2="${px.toFixed(1)}" y2="${y}" stroke="${escape(colors.grid)}"/>`);
        parts.push(text(px, y + 14, v));
      }
      parts.push(text(box.left + box.width / 2, height - 4, axis.label, 'middle', 'font-weight="600"'));
      return;
    }
    const left = axis.side === 3;
    const edge = left ? box.left : box.left + box.width;
    const offset = plot.axes.slice(1, k).filter((a) => a.side === axis.side).length * 56;
    const at = left ? edge - offset : edge + offset;
    parts.push(`<line x1="${at}" y1="${box.top}" x2="${at}" y2="${box.top + box.height}" stroke="${escape(colors.tick)}"/>`);
    for (const v of ticks(min, max, 5)) {
      const py = box.top + plot.valToPos(v, key);
      parts.push(text(left ? at - 4 : at + 4, py + 4, Number(v.toPrecision(6)), left ? 'end' : 'start'));
    }
    const tx = left ? at - 44 : at + 44;
    const ty = box.top + box.height / 2;
    parts.push(text(tx, ty, axis.label, 'middle', `font-weight="600" transform="rotate(${left ? -90 : 90} ${tx.toFixed(1)} ${ty.toFixed(1)})"`));
  });
  parts.push(`<rect x="${box.left}" y="${box.top}" width="${box.width}" height="${box.height}" fill="none" stroke="${escape(colors.tick)}"/>`);
  // One polyline per shown series, clipped to the plot area.
  parts.push(`<clipPath id="area"><rect x="${box.left}" y="${box.top}" width="${box.width}" height="${box.height}"/></clipPath>`);
  plot.series.forEach((s, c) => {
    if (c === 0 || !s.show) return;
    const y = plot.data[c];
    const points = [];
    for (let i = 0; i < t.length; i++) {
      if (y[i] == null || !Number.isFinite(y[i])) continue;
      points.push(`${(box.left + plot.valToPos(t[i], 'x')).toFixed(2)},${(box.top + plot.valToPos(y[i], s.scale)).toFixed(2)}`);
    }
    parts.push(
      `<polyline clip-path="url(#area)" fill="none" stroke="${escape(s.stroke(plot, c))}" stroke-width="1.5" stroke-linejoin="round" points="${points.join(' ')}"><title>${escape(s.label)}</title></polyline>`,
    );
  });
  for (const k of key(plot)) {
    parts.push(`<line x1="${k.x}" y1="${k.y}" x2="${k.x + 16}" y2="${k.y}" stroke="${escape(k.color)}" stroke-width="2"/>`);
    parts.push(text(k.x + 20, k.y + 4, k.label, 'start'));
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="${escape(colors.font)}" font-size="11" fill="${escape(colors.text)}">${parts.join('')}</svg>`;
}

/** Saves `blob` as `name` through the browser. */
export function download(blob, name) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}
