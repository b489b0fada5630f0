// An offline run of the model being edited: started from the options,
// inputs and probes, its rows streamed into the chart (useChart.js) as
// they come, its progress sent on `bus`, its final values kept; a Run
// that fails before it begins leaves the previous result shown, stale.
import { useState } from 'react';
import { api, readBatch, socket } from '../api.js';
import { Columns } from '../envelope.js';
import { describeError } from '../editor/errors.js';
import { outputUnits, throttled, unitOf } from '../plot.js';
import { request } from './request.js';

/** How often the chart is drawn while rows stream in (ms). */
const STREAMING_REDRAW_MS = 250;

/** Runs `model` on the server and shows each run in `chart`; the phase is `state`. */
export function useSimulation({ model, options, inputs, probes, chart, bus, state, setState }) {
  const [job, setJob] = useState(null);
  // Whether the result shown is a previous run's: the last Run failed before it began.
  const [stale, setStale] = useState(false);
  const [finals, setFinals] = useState([]);
  const [shown, setShown] = useState([]);
  const { run, draw, build, envelope, width } = chart;

  const fail = (error, place) => {
    setStale(run.current !== null);
    setState(place === undefined ? { phase: 'failed', error } : { phase: 'failed', error, place });
  };

  /** The run `status` the server started, shown from now on. */
  const begin = (status, doc, started) => {
    const names = status.columns;
    const stop = Number(options.stop.trim() === '' ? (model.doc.simulation?.stop ?? 10) : options.stop);
    run.current?.ws?.close();
    const current = {
      id: status.id,
      names,
      units: outputUnits(doc),
      columns: new Columns(names, status.expected_rows),
      range: [0, stop > 0 ? stop : 1],
      view: null,
      shown: names.slice(1).map((_, i) => i + 1),
      started,
    };
    run.current = current;
    envelope(current);
    setJob(status);
    setStale(false);
    setFinals([]);
    setShown(current.shown);
    chart.setZoom(null);
    setState({ phase: 'running' });
    return current;
  };

  /** The rows and events of `current` from the server, as they come. */
  const follow = (current) => {
    // Four draws a second while rows stream in: each draw is composited
    // by the browser on the CPU the simulation also needs.
    const redraw = throttled(() => {
      if (run.current !== current || current.ended) return;
      draw();
    }, STREAMING_REDRAW_MS);
    const ws = socket(`/api/simulations/${current.id}/stream`);
    current.ws = ws;
    // A socket that closes before the end leaves the run failed, not running.
    ws.onclose = () => {
      if (run.current !== current || current.ended) return;
      current.ended = true;
      setState({ phase: 'failed', error: 'the connection to the server closed before the simulation ended; run it again' });
    };
    ws.onmessage = (m) => {
      if (run.current !== current) return;
      const { columns, names } = current;
      if (typeof m.data !== 'string') {
        const before = columns.rows;
        columns.add(readBatch(m.data));
        const last = columns.data[0][columns.rows - 1];
        if (before === 0 && columns.data[0][0] > current.range[0]) current.range[0] = Math.min(columns.data[0][0], current.range[1]);
        if (last > current.range[1]) {
          current.range[1] = current.range[0] + 2 * (last - current.range[0]);
          envelope(current);
        } else if (current.envelope.width === Math.floor(width())) current.envelope.add(columns, before, columns.rows);
        redraw();
        return;
      }
      const message = JSON.parse(m.data);
      if (message.type === 'progress') bus.dispatchEvent(new CustomEvent('progress', { detail: message }));
      if (message.type === 'end') {
        const end = columns.rows > 0 ? columns.data[0][columns.rows - 1] : current.range[1];
        if (end > current.range[0] && end !== current.range[1]) {
          current.range[1] = end;
          envelope(current);
        }
        current.ended = true;
        setFinals(names.slice(1).map((n, i) => ({ name: n, unit: unitOf(current.units, n), last: columns.last(i + 1) })));
        setState({ phase: message.state, rows: message.rows, error: message.error, summary: message.summary });
        if (chart.plot.current) draw();
        else current.plotted = performance.now() - current.started;
      }
    };
  };

  const start = async () => {
    if (state.phase === 'running' || state.phase === 'starting') return;
    const started = performance.now();
    const asked = request(model, options, inputs, probes);
    if (asked.error) return fail(asked.error);
    setState({ phase: 'starting' });
    const r = await api('POST', '/api/simulations', asked.body);
    if (!r.ok) return fail(describeError(r.json ?? { error: r.text }), r.json?.place);
    follow(begin(r.json, asked.doc, started));
    // The chart is made once the socket is asked for, so rows are on their way meanwhile.
    build();
  };
  const cancel = () => job && api('DELETE', `/api/simulations/${job.id}`);
  const toggle = (c) => {
    const next = shown.includes(c) ? shown.filter((x) => x !== c) : [...shown, c].sort((a, b) => a - b);
    setShown(next);
    run.current.shown = next;
    build();
  };
  return { job, stale, finals, shown, start, cancel, toggle };
}
