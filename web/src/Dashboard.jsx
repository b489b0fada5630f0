// Real-time runs: the list, a run started from a configuration in the
// served folder, and the selected run live: counters, frame sources, the
// wake-up latency histogram, devices, the recorded outputs, and changes
// of inputs and block parameters with their log.
import { useEffect, useRef, useState } from 'react';
import { api, readBatch, socket } from './api.js';
import { Columns, chart, throttled } from './plot.js';

function Histogram({ data }) {
  const buckets = data?.histogram || [];
  const top = Math.max(1, ...buckets.map(([, c]) => c));
  return (
    <div className="histogram" aria-label="wake-up latency histogram">
      {buckets.map(([v, c]) => (
        <div key={v} className="bar" title={`${(v / 1000).toFixed(1)} µs: ${c}`} style={{ height: `${(100 * c) / top}%` }} />
      ))}
    </div>
  );
}

function Live({ run }) {
  const [stats, setStats] = useState(null);
  const [latest, setLatest] = useState({});
  const [changes, setChanges] = useState([]);
  const [end, setEnd] = useState(null);
  const [change, setChange] = useState({ kind: 'block', input: run.inputs[0] || '', block: '', param: '', value: '' });
  const [answer, setAnswer] = useState('');
  const element = useRef(null);
  useEffect(() => {
    let plot = null;
    let columns = null;
    const ws = socket(`/api/runs/${run.id}/stream`);
    const redraw = throttled(() => {
      const from = Math.max(0, columns.rows - 2000);
      plot.setData(columns.view(from));
      setLatest(Object.fromEntries(columns.names.slice(1).map((n, i) => [n, columns.last(i + 1)])));
    });
    ws.onmessage = (m) => {
      if (typeof m.data !== 'string') {
        columns.add(readBatch(m.data));
        redraw();
        return;
      }
      const message = JSON.parse(m.data);
      if (message.type === 'columns') {
        columns = new Columns(message.columns);
        element.current.innerHTML = '';
        plot = chart(element.current, message.columns, Math.max(400, element.current.clientWidth - 10), 280);
      } else if (message.type === 'stats') setStats(message);
      else if (message.type === 'change') setChanges((c) => [...c, message]);
      else if (message.type === 'end') setEnd(message);
    };
    return () => {
      ws.close();
      plot?.destroy();
    };
  }, [run.id]);
  const blocks = Array.from(new Set(run.tunable.map((t) => t.block)));
  const params = run.tunable.filter((t) => t.block === change.block).map((t) => t.param);
  const send = async () => {
    const value = Number(change.value);
    const body =
      change.kind === 'input'
        ? { input: change.input, value }
        : { block: change.block, param: change.param, value: Number.isFinite(value) ? value : change.value };
    const r = await api('POST', `/api/runs/${run.id}/changes`, body);
    setAnswer(r.ok ? `requested for frame ${r.json.applies_at_frame}` : r.json?.error ?? r.text);
  };
  const sources = stats?.sources || {};
  return (
    <div className="live">
      <div className="counters">
        <span>
          t <b data-testid="run-t">{stats ? stats.t.toFixed(2) : '-'}</b> s
        </span>
        <span>
          frames <b data-testid="run-frames">{stats?.frames ?? '-'}</b>
        </span>
        <span>
          missed <b data-testid="run-missed">{stats?.missed ?? '-'}</b>
        </span>
        <span>
          unusable <b data-testid="run-unusable">{stats?.unusable ?? '-'}</b>
        </span>
        {Object.entries(sources).map(([k, v]) => (
          <span key={k}>
            {k} <b data-testid={`run-source-${k}`}>{v}</b>
          </span>
        ))}
        <span>
          wake p50 <b>{stats?.wake_ns?.p50 != null ? (stats.wake_ns.p50 / 1000).toFixed(1) : '-'}</b> µs, p99{' '}
          <b>{stats?.wake_ns?.p99 != null ? (stats.wake_ns.p99 / 1000).toFixed(1) : '-'}</b> µs
        </span>
        <span>
          compute p99 <b>{stats?.compute_ns?.p99 != null ? (stats.compute_ns.p99 / 1000).toFixed(1) : '-'}</b> µs
        </span>
        {end && <span data-testid="run-end">{end.state}{end.error ? `: ${end.error}` : ''}</span>}
      </div>
      <Histogram data={stats?.wake_ns} />
      <table className="devices">
        <tbody>
          {Object.entries(stats?.devices || {}).map(([name, counts]) => (
            <tr key={name}>
              <th>{name}</th>
              <td>
                {Object.entries(counts)
                  .filter(([, v]) => typeof v === 'number')
                  .map(([k, v]) => `${k} ${v}`)
                  .join(', ')}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <div ref={element} className="chart" />
      <div className="latest">
        {Object.entries(latest).map(([n, v]) => (
          <span key={n}>
            {n} <b data-testid={`live-${n}`}>{String(v)}</b>
          </span>
        ))}
      </div>
      <div className="change">
        <select aria-label="change kind" value={change.kind} onChange={(e) => setChange({ ...change, kind: e.target.value })}>
          <option value="block">block parameter</option>
          <option value="input">input</option>
        </select>
        {change.kind === 'input' ? (
          <select aria-label="input" value={change.input} onChange={(e) => setChange({ ...change, input: e.target.value })}>
            {run.inputs.map((i) => (
              <option key={i}>{i}</option>
            ))}
          </select>
        ) : (
          <>
            <select aria-label="block" value={change.block} onChange={(e) => setChange({ ...change, block: e.target.value, param: '' })}>
              <option value="">block…</option>
              {blocks.map((b) => (
                <option key={b}>{b}</option>
              ))}
            </select>
            <select aria-label="parameter" value={change.param} onChange={(e) => setChange({ ...change, param: e.target.value })}>
              <option value="">parameter…</option>
              {params.map((p) => (
                <option key={p}>{p}</option>
              ))}
            </select>
          </>
        )}
        <input aria-label="new value" value={change.value} onChange={(e) => setChange({ ...change, value: e.target.value })} size={8} />
        <button onClick={send}>Change</button>
        <button onClick={() => api('DELETE', `/api/runs/${run.id}`)}>Stop</button>
        <span data-testid="change-answer">{answer}</span>
      </div>
      <ol className="changes" data-testid="change-log">
        {changes.map((c, i) => (
          <li key={i}>
            {c.what} = {JSON.stringify(c.value)}
            {c.applied_at_frame !== undefined ? ` applied at frame ${c.applied_at_frame} (t = ${c.applied_at} s)` : ` requested at ${c.requested_at} s`}
          </li>
        ))}
      </ol>
    </div>
  );
}

export function Dashboard() {
  const [runs, setRuns] = useState([]);
  const [selected, setSelected] = useState(null);
  const [form, setForm] = useState({ config: 'config/examples/cruise.toml', virtual: true, pace: '1', duration: '' });
  const [error, setError] = useState('');
  useEffect(() => {
    const poll = async () => {
      const r = await api('GET', '/api/runs');
      if (r.ok) setRuns(r.json.runs);
    };
    poll();
    const timer = setInterval(poll, 1000);
    return () => clearInterval(timer);
  }, []);
  const start = async () => {
    const body = { config: form.config, virtual_clock: form.virtual };
    if (form.virtual && form.pace !== '') body.pace = Number(form.pace);
    if (form.duration !== '') body.duration = Number(form.duration);
    const r = await api('POST', '/api/runs', body);
    if (!r.ok) return setError(r.json?.error ?? r.text);
    setError('');
    setRuns((rs) => [...rs, r.json]);
    setSelected(r.json.id);
  };
  const run = runs.find((r) => r.id === selected);
  return (
    <div className="dashboard">
      <div className="options">
        <label>
          configuration
          <input aria-label="configuration" value={form.config} onChange={(e) => setForm({ ...form, config: e.target.value })} size={32} />
        </label>
        <label>
          <input type="checkbox" aria-label="virtual clock" checked={form.virtual} onChange={(e) => setForm({ ...form, virtual: e.target.checked })} />
          virtual clock
        </label>
        <label>
          pace
          <input aria-label="pace" value={form.pace} onChange={(e) => setForm({ ...form, pace: e.target.value })} size={4} />
        </label>
        <label>
          duration
          <input aria-label="duration" value={form.duration} onChange={(e) => setForm({ ...form, duration: e.target.value })} size={6} />
        </label>
        <button onClick={start}>Start run</button>
        <span className="status-error">{error}</span>
      </div>
      <ul className="runs">
        {runs.map((r) => (
          <li key={r.id}>
            <button className={r.id === selected ? 'chosen' : ''} onClick={() => setSelected(r.id)} data-testid={`run-${r.id}`}>
              {r.id}: {r.name} ({r.clock}, {r.state})
            </button>
          </li>
        ))}
      </ul>
      {run && <Live key={run.id} run={run} />}
    </div>
  );
}
