// The Run view's chart: a uPlot in `box` of the run shown (`run`), made
// again when the view is shown, the series shown change or the theme
// does, resized with its box, zoomed by a drag and reset by a
// double-click; per pixel column it draws the extremes of each series
// (the envelope of the whole run, or the rows of the zoomed range).
import { useCallback, useEffect, useRef, useState } from 'react';
import { Envelope, visible } from '../envelope.js';
import { chart, palette } from '../plot.js';

/**
 * uPlot's options for run `r`: a drag on the chart zooms to its range
 * (`zoomTo`), a double-click resets (`resetZoom`), the row under the
 * cursor goes to `bus`, and the end's first draw to `plotted`.
 */
function optionsFor(r, { bus, zoomTo, resetZoom, plotted }) {
  let frame = 0;
  return {
    colors: r.colors,
    units: r.units,
    shown: r.shown,
    legend: false,
    x: () => r.view ?? r.range,
    cursor: {
      y: false,
      points: { show: false },
      drag: { x: true, y: false, setScale: false },
      bind: { dblclick: () => () => (resetZoom(), null) },
    },
    hooks: {
      setSelect: [
        (u) => {
          const { left, width } = u.select;
          u.setSelect({ left: 0, width: 0, top: 0, height: 0 }, false);
          if (width >= 4) zoomTo([u.posToVal(left, 'x'), u.posToVal(left + width, 'x')]);
        },
      ],
      setCursor: [
        (u) => {
          const left = u.cursor.left;
          const t = left == null || left < 0 ? null : u.posToVal(left, 'x');
          cancelAnimationFrame(frame);
          frame = requestAnimationFrame(() => bus.dispatchEvent(new CustomEvent('hover', { detail: t === null ? -1 : r.columns.nearest(t) })));
        },
      ],
      draw: [
        () => {
          if (r.ended && r.plotted === undefined) {
            r.plotted = performance.now() - r.started;
            plotted(r.plotted);
          }
        },
      ],
    },
  };
}

/**
 * The chart of the run in `run.current` (its columns and units, every
 * row, the envelope of the whole run, the time range it spans, and the
 * zoomed range or null); the row under the cursor goes to `bus` as
 * `hover` events, and the time from Run to the end's first draw to
 * `setState` as `plotted`.
 */
export function useChart({ active, bus, setState }) {
  const box = useRef(null);
  const plot = useRef(null);
  const run = useRef(null);
  const [zoom, setZoom] = useState(null);
  const [theme, setTheme] = useState(0);
  // The chart's width in pixels, kept from the last layout (not read per batch).
  const boxWidth = useRef(800);
  /** The width in pixels the envelope is made for. */
  const width = () => Math.max(100, boxWidth.current);

  /** The envelope of all the rows so far over the run's time range. */
  const envelope = (r) => {
    r.envelope = new Envelope(r.names.length - 1, r.range[0], r.range[1], width());
    r.envelope.add(r.columns, 0, r.columns.rows);
  };
  /** What the chart shows now: the envelope of the run, or the zoomed range. */
  const data = () => {
    const r = run.current;
    if (r.view) return visible(r.columns, r.view[0], r.view[1], width());
    if (r.envelope.width !== Math.floor(width())) envelope(r);
    return r.envelope.data;
  };
  const draw = () => plot.current && run.current && plot.current.setData(data());
  const resetZoom = () => {
    if (!run.current) return;
    run.current.view = null;
    setZoom(null);
    draw();
  };
  /** The chart's size follows its box's. */
  const fit = () => {
    boxWidth.current = box.current.clientWidth;
    plot.current.setSize({ width: box.current.clientWidth, height: box.current.clientHeight });
    draw();
  };

  const build = useCallback(() => {
    const r = run.current;
    plot.current?.destroy();
    plot.current = null;
    if (!r || !box.current || box.current.clientWidth === 0) return;
    boxWidth.current = box.current.clientWidth;
    box.current.replaceChildren();
    r.colors = palette(box.current);
    const zoomTo = (view) => {
      r.view = view;
      setZoom(view);
      draw();
    };
    const plotted = (ms) => setState((s) => ({ ...s, plotted: ms }));
    plot.current = chart(box.current, r.names, box.current.clientWidth, box.current.clientHeight, optionsFor(r, { bus, zoomTo, resetZoom, plotted }));
    box.current.uplot = plot.current;
    draw();
  }, []);

  // The chart follows its box: the window, the side panel, the view shown again.
  useEffect(() => {
    const observer = new ResizeObserver(() => {
      const element = box.current;
      if (!element || element.clientWidth === 0 || !run.current) return;
      if (!plot.current) return build();
      fit();
    });
    observer.observe(box.current);
    return () => observer.disconnect();
  }, []);
  useEffect(() => {
    if (active && run.current && box.current?.clientWidth > 0) {
      if (!plot.current) build();
      else if (plot.current.width !== box.current.clientWidth || plot.current.height !== box.current.clientHeight) fit();
    }
  }, [active]);
  // Light or dark: the canvas takes the theme's colours again.
  useEffect(() => {
    const root = box.current?.closest('.radix-themes');
    if (!root) return undefined;
    const observer = new MutationObserver(() => setTheme((n) => n + 1));
    observer.observe(root, { attributes: true, attributeFilter: ['class'] });
    return () => observer.disconnect();
  }, []);
  useEffect(() => {
    if (theme > 0 && run.current) build();
  }, [theme, build]);
  useEffect(() => () => {
    plot.current?.destroy();
    run.current?.ws?.close();
  }, []);

  return { box, plot, run, zoom, setZoom, build, draw, envelope, width, resetZoom };
}
