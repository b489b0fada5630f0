// A real-time run's stream: its statistics, the recorded outputs drawn
// in a chart of the last 2000 rows (one y axis per unit, as the Run view
// draws it) with the values under the cursor or the latest, the changes
// applied, and its end.
import { useEffect, useRef, useState } from 'react';
import { readBatch, socket } from '../api.js';
import { Columns, chart, palette, throttled, unitOf } from '../plot.js';
import { formatSignal } from '../readout.js';

/** The live chart's height in pixels. */
const CHART_HEIGHT = 260;

/**
 * The stream of `run`, followed while it is shown: `element` (a ref) for
 * the chart, and what the stream has said so far.
 */
export function useLiveStream(run) {
  const [stats, setStats] = useState(null);
  // The chart's columns and colours, and the value of each in the row
  // under the cursor, else in the latest row.
  const [signals, setSignals] = useState(null);
  const [values, setValues] = useState([]);
  const [changes, setChanges] = useState([]);
  const [end, setEnd] = useState(null);
  const element = useRef(null);
  useEffect(() => {
    const units = run.units ?? {};
    let plot = null;
    let columns = null;
    // The time under the cursor (null: the latest row is read).
    let hover = null;
    const read = () => {
      const row = hover === null ? columns.rows - 1 : columns.nearest(hover);
      setValues(columns.names.map((n, c) => (row < 0 ? '–' : formatSignal(columns.data[c][row], columns.size[c], unitOf(units, n)))));
    };
    const ws = socket(`/api/runs/${run.id}/stream`);
    const redraw = throttled(() => {
      const from = Math.max(0, columns.rows - 2000);
      plot.setData(columns.view(from));
      read();
    });
    let frame = 0;
    ws.onmessage = (m) => {
      if (typeof m.data !== 'string') {
        columns.add(readBatch(m.data));
        redraw();
        return;
      }
      const message = JSON.parse(m.data);
      if (message.type === 'columns') {
        redraw.cancel();
        plot?.destroy();
        columns = new Columns(message.columns);
        element.current.innerHTML = '';
        const colors = palette(element.current);
        plot = chart(element.current, message.columns, Math.max(300, element.current.clientWidth), CHART_HEIGHT, {
          units,
          colors,
          legend: false,
          cursor: { y: false, points: { show: false }, drag: { x: false, y: false } },
          hooks: {
            setCursor: [
              (u) => {
                const left = u.cursor.left;
                hover = left == null || left < 0 ? null : u.posToVal(left, 'x');
                cancelAnimationFrame(frame);
                frame = requestAnimationFrame(() => columns.rows > 0 && read());
              },
            ],
          },
        });
        element.current.uplot = plot;
        setSignals({ names: message.columns, colors: colors.series });
      } else if (message.type === 'stats') setStats(message);
      else if (message.type === 'change') setChanges((c) => [...c, message]);
      else if (message.type === 'end') setEnd(message);
    };
    const resize = new ResizeObserver(([entry]) => {
      const width = Math.floor(entry.contentRect.width);
      if (plot && width > 0) plot.setSize({ width, height: CHART_HEIGHT });
    });
    resize.observe(element.current);
    return () => {
      ws.close();
      redraw.cancel();
      cancelAnimationFrame(frame);
      resize.disconnect();
      plot?.destroy();
    };
  }, [run.id]);
  return { element, stats, signals, values, changes, end };
}
