// An offline simulation of the model being edited: the solver options,
// rows plotted as they stream in, the signals to show, zoom (drag on the
// chart, double-click to reset), the final values, and the results as CSV,
// PNG or SVG.
import { useEffect, useRef, useState } from 'react';
import { api, readBatch, socket } from './api.js';
import { serialize } from './format.js';
import { Columns, chart, downloadPng, downloadSvg, throttled } from './plot.js';

const SOLVERS = ['rk4', 'heun', 'euler', 'bdf'];

export function Run({ model }) {
  const sim = model.doc.simulation || {};
  const [options, setOptions] = useState({
    solver: String(sim.solver ?? 'rk4'),
    step: String(sim.step ?? '0.001'),
    stop: String(sim.stop ?? '10'),
    rtol: String(sim.rtol ?? '1e-6'),
    atol: String(sim.atol ?? '1e-8'),
  });
  const [job, setJob] = useState(null);
  const [state, setState] = useState({ phase: 'idle' });
  const [finals, setFinals] = useState([]);
  const [shown, setShown] = useState([]);
  const element = useRef(null);
  const plot = useRef(null);
  const columns = useRef(null);

  useEffect(() => () => plot.current?.destroy(), []);

  const start = async () => {
    const body = { model: serialize(model.doc, model.style), solver: options.solver };
    for (const k of ['step', 'stop', 'rtol', 'atol']) if (options[k] !== '') body[k] = Number(options[k]);
    setState({ phase: 'starting' });
    const r = await api('POST', '/api/simulations', body);
    if (!r.ok) return setState({ phase: 'failed', error: r.json?.error ?? r.text });
    const status = r.json;
    setJob(status);
    const names = status.columns;
    columns.current = new Columns(names, status.expected_rows);
    plot.current?.destroy();
    element.current.innerHTML = '';
    plot.current = chart(element.current, names, Math.max(400, element.current.clientWidth - 10));
    setShown(names.slice(1).map((_, i) => i + 1));
    const redraw = throttled(() => {
      plot.current.setData(columns.current.view());
      setState((s) => ({ ...s, rows: columns.current.rows }));
    });
    const ws = socket(`/api/simulations/${status.id}/stream`);
    ws.onmessage = (m) => {
      if (typeof m.data !== 'string') {
        columns.current.add(readBatch(m.data));
        redraw();
        return;
      }
      const message = JSON.parse(m.data);
      if (message.type === 'progress') setState((s) => ({ ...s, phase: 'running', progress: message.progress }));
      if (message.type === 'end') {
        plot.current.setData(columns.current.view());
        setFinals(names.slice(1).map((n, i) => [n, columns.current.last(i + 1)]));
        setState({ phase: message.state, rows: message.rows, error: message.error, summary: message.summary, progress: 1 });
      }
    };
  };
  const cancel = () => job && api('DELETE', `/api/simulations/${job.id}`);
  const toggle = (c) => {
    const next = shown.includes(c) ? shown.filter((x) => x !== c) : [...shown, c].sort();
    setShown(next);
    plot.current?.setSeries(c, { show: next.includes(c) });
  };
  const name = String(model.doc.name ?? 'model').replace(/[^A-Za-z0-9_-]+/g, '_');
  return (
    <div className="run">
      <div className="options">
        <label>
          solver
          <select aria-label="solver" value={options.solver} onChange={(e) => setOptions({ ...options, solver: e.target.value })}>
            {SOLVERS.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
        {['step', 'stop', 'rtol', 'atol'].map((k) => (
          <label key={k}>
            {k}
            <input aria-label={k} value={options[k]} onChange={(e) => setOptions({ ...options, [k]: e.target.value })} size={8} />
          </label>
        ))}
        <button onClick={start} disabled={state.phase === 'running'}>Run</button>
        <button onClick={cancel} disabled={state.phase !== 'running'}>Cancel</button>
        {job && <a href={`/api/simulations/${job.id}/csv`} download>CSV</a>}
        {plot.current && <button onClick={() => downloadPng(plot.current, name)}>PNG</button>}
        {plot.current && <button onClick={() => downloadSvg(columns.current, shown, name)}>SVG</button>}
      </div>
      <div className="progress" data-testid="run-state">
        {state.phase}
        {state.progress !== undefined && ` ${(100 * state.progress).toFixed(0)} %`}
        {state.rows !== undefined && `, ${state.rows} rows`}
        {state.summary && ` — ${state.summary}`}
        {state.error && <span className="status-error"> {state.error}</span>}
      </div>
      {job && (
        <div className="signals">
          {job.columns.slice(1).map((n, i) => (
            <label key={n}>
              <input type="checkbox" aria-label={`show ${n}`} checked={shown.includes(i + 1)} onChange={() => toggle(i + 1)} />
              {n}
            </label>
          ))}
        </div>
      )}
      <div ref={element} className="chart" onDoubleClick={() => plot.current?.setData(columns.current.view())} />
      {finals.length > 0 && (
        <table className="finals">
          <thead>
            <tr>
              <th>output</th>
              <th>final value</th>
            </tr>
          </thead>
          <tbody>
            {finals.map(([n, v]) => (
              <tr key={n}>
                <td>{n}</td>
                <td data-testid={`final-${n}`}>{String(v)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
