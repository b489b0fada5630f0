// An offline simulation of the model being edited: the solver options,
// values for its inputs and probes of its signals (RunInputs.jsx),
// rows plotted as they stream in (per pixel column, the extremes of each
// series), one y axis per unit, a legend of the values under the cursor,
// zoom (drag on the chart, double-click to reset) redrawn from the full
// rows, the final values, and the results as CSV, PNG or SVG. A Run that
// fails before it begins leaves the previous result shown as out of date,
// its error in words with a button to the block it names.
import { useCallback, useEffect, useRef, useState } from 'react';
import { Badge, Box, Button, Callout, Card, Flex, Heading, Table, Text, TextField, Tooltip } from '@radix-ui/themes';
import { Crosshair1Icon, DownloadIcon, ExclamationTriangleIcon, ImageIcon, PlayIcon, ResetIcon, StopIcon, TableIcon } from '@radix-ui/react-icons';
import { api, readBatch, socket } from './api.js';
import { Columns, Envelope, visible } from './envelope.js';
import { describeError } from './editor/errors.js';
import { serialize } from './format.js';
import { chart, download, outputUnits, palette, pngOf, svgOf, throttled, unitOf } from './plot.js';
import { Legend } from './Legend.jsx';
import { prepared } from './offline.js';
import { RunInputs } from './RunInputs.jsx';
import { formatSignal } from './readout.js';
import { TableRoot } from './TableRoot.jsx';
import './run.css';

/** How often the chart is drawn while rows stream in (ms). */
const STREAMING_REDRAW_MS = 250;

const SOLVERS = ['rk4', 'heun', 'euler', 'bdf'];
const PHASE_COLOR = { idle: 'gray', starting: 'blue', running: 'blue', done: 'green', failed: 'red', cancelled: 'amber' };

/** The solver options a model's `simulation` section gives (as typed text). */
function optionsOf(sim = {}) {
  return {
    solver: String(sim.solver ?? 'rk4'),
    step: String(sim.step ?? '0.001'),
    stop: String(sim.stop ?? '10'),
    rtol: String(sim.rtol ?? '1e-6'),
    atol: String(sim.atol ?? '1e-8'),
  };
}

/** The progress of the run under way, from the `progress` events on `bus`. */
function Live({ bus }) {
  const [progress, setProgress] = useState({ progress: 0, rows: 0 });
  useEffect(() => {
    const update = (e) => setProgress(e.detail);
    bus.addEventListener('progress', update);
    return () => bus.removeEventListener('progress', update);
  }, [bus]);
  return (
    <Text size="1" color="gray" role="status" aria-label="progress">
      {progress.rows.toLocaleString('en')} rows · {(100 * progress.progress).toFixed(0)} %
    </Text>
  );
}

/**
 * The signals (Legend.jsx): each one's colour, name, unit, whether it is
 * shown, and its value (six digits) in the row under the cursor (`hover`
 * events on `bus`), else in the last row so far (updated on each
 * `progress` event).
 */
function Signals({ bus, run: r, names, shown, toggle }) {
  const [hover, setHover] = useState(-1);
  const [, setTick] = useState(0);
  useEffect(() => {
    const onHover = (e) => setHover(e.detail);
    let last = 0;
    const onProgress = () => {
      if (performance.now() - last < 500) return;
      last = performance.now();
      setTick((n) => n + 1);
    };
    bus.addEventListener('hover', onHover);
    bus.addEventListener('progress', onProgress);
    return () => {
      bus.removeEventListener('hover', onHover);
      bus.removeEventListener('progress', onProgress);
    };
  }, [bus]);
  const rows = r?.columns.rows ?? 0;
  const row = rows > 0 ? (hover >= 0 && hover < rows ? hover : rows - 1) : -1;
  return (
    <>
      <Flex justify="between" align="baseline" mb="2">
        <Heading size="2">Signals</Heading>
        <Text size="1" color="gray" data-testid="legend-time">
          {row >= 0 ? `t = ${Number(r.columns.data[0][row].toPrecision(6))} s` : ''}
        </Text>
      </Flex>
      {!names && (
        <Text size="1" color="gray">
          The model’s outputs appear here, with their values under the cursor.
        </Text>
      )}
      {names && (
        <Legend
          names={names}
          units={r?.units ?? {}}
          colors={r?.colors?.series ?? []}
          shown={shown}
          toggle={toggle}
          testid="legend"
          value={(c) => (row >= 0 ? formatSignal(r.columns.data[c][row], r.columns.size[c], '', 6) : '—')}
        />
      )}
    </>
  );
}

function Field({ label, name, value, onChange, unit, width = 96 }) {
  return (
    <label className="run-field">
      <Text size="1" color="gray" weight="medium">
        {label}
      </Text>
      <TextField.Root size="2" aria-label={name} value={value} onChange={(e) => onChange(e.target.value)} style={{ width }}>
        {unit && <TextField.Slot side="right">{unit}</TextField.Slot>}
      </TextField.Root>
    </label>
  );
}

export function Run({ model, active = true, onShowBlock }) {
  const [options, setOptions] = useState(() => optionsOf(model.doc.simulation));
  const [job, setJob] = useState(null);
  const [state, setState] = useState({ phase: 'idle' });
  // Whether the result shown is a previous run's: the last Run failed before it began.
  const [stale, setStale] = useState(false);
  // Values for the model's inputs and the signals probed, for the runs only (RunInputs.jsx).
  const [inputs, setInputs] = useState({});
  const [probes, setProbes] = useState([]);
  useEffect(() => {
    setInputs({});
    setProbes([]);
  }, [model.generation]);
  const [finals, setFinals] = useState([]);
  const [shown, setShown] = useState([]);
  const [zoom, setZoom] = useState(null);
  const [theme, setTheme] = useState(0);
  const box = useRef(null);
  const plot = useRef(null);
  // The run being shown: its columns and units, every row, the envelope of
  // the whole run, the time range it spans, and the zoomed range (or null).
  const run = useRef(null);
  // Progress while running and the row under the cursor go to <Live> and
  // <Signals> alone: the rest of the view does not render again for them.
  const bus = useRef(new EventTarget());

  // The options follow the model's own settings: another model opened, or
  // its settings edited in the editor.
  const settings = JSON.stringify(model.doc.simulation ?? null);
  useEffect(() => setOptions(optionsOf(model.doc.simulation)), [model.generation, settings]);

  // The chart's width in pixels, kept from the last layout (not read per batch).
  const boxWidth = useRef(800);
  /** The width in pixels the envelope is made for. */
  const width = () => Math.max(100, boxWidth.current);

  /** What the chart shows now: the envelope of the run, or the zoomed range. */
  const data = () => {
    const r = run.current;
    if (r.view) return visible(r.columns, r.view[0], r.view[1], width());
    if (r.envelope.width !== Math.floor(width())) envelope(r);
    return r.envelope.data;
  };
  /** The envelope of all the rows so far over the run's time range. */
  const envelope = (r) => {
    r.envelope = new Envelope(r.names.length - 1, r.range[0], r.range[1], width());
    r.envelope.add(r.columns, 0, r.columns.rows);
  };
  const draw = () => plot.current && run.current && plot.current.setData(data());

  const build = useCallback(() => {
    const r = run.current;
    plot.current?.destroy();
    plot.current = null;
    if (!r || !box.current || box.current.clientWidth === 0) return;
    boxWidth.current = box.current.clientWidth;
    box.current.replaceChildren();
    let frame = 0;
    r.colors = palette(box.current);
    plot.current = chart(box.current, r.names, box.current.clientWidth, box.current.clientHeight, {
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
            const { left, width: w } = u.select;
            u.setSelect({ left: 0, width: 0, top: 0, height: 0 }, false);
            if (w < 4) return;
            r.view = [u.posToVal(left, 'x'), u.posToVal(left + w, 'x')];
            setZoom(r.view);
            draw();
          },
        ],
        setCursor: [
          (u) => {
            const left = u.cursor.left;
            const t = left == null || left < 0 ? null : u.posToVal(left, 'x');
            cancelAnimationFrame(frame);
            frame = requestAnimationFrame(() => bus.current.dispatchEvent(new CustomEvent('hover', { detail: t === null ? -1 : r.columns.nearest(t) })));
          },
        ],
        draw: [
          () => {
            if (r.ended && r.plotted === undefined) {
              r.plotted = performance.now() - r.started;
              setState((s) => ({ ...s, plotted: r.plotted }));
            }
          },
        ],
      },
    });
    box.current.uplot = plot.current;
    draw();
  }, []);

  const resetZoom = () => {
    if (!run.current) return;
    run.current.view = null;
    setZoom(null);
    draw();
  };

  // The chart follows its box: the window, the side panel, the view shown again.
  useEffect(() => {
    const observer = new ResizeObserver(() => {
      const element = box.current;
      if (!element || element.clientWidth === 0 || !run.current) return;
      if (!plot.current) return build();
      boxWidth.current = element.clientWidth;
      plot.current.setSize({ width: element.clientWidth, height: element.clientHeight });
      draw();
    });
    observer.observe(box.current);
    return () => observer.disconnect();
  }, []);
  useEffect(() => {
    if (active && run.current && box.current?.clientWidth > 0) {
      if (!plot.current) build();
      else if (plot.current.width !== box.current.clientWidth || plot.current.height !== box.current.clientHeight) {
        boxWidth.current = box.current.clientWidth;
        plot.current.setSize({ width: box.current.clientWidth, height: box.current.clientHeight });
        draw();
      }
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

  const start = async () => {
    if (state.phase === 'running' || state.phase === 'starting') return;
    const started = performance.now();
    let doc;
    try {
      doc = prepared(model.doc, inputs, probes);
    } catch (e) {
      setStale(run.current !== null);
      return setState({ phase: 'failed', error: e.message });
    }
    // A model with no outputs would run and plot nothing: said instead.
    if (Object.keys(outputUnits(doc)).length === 0) {
      setStale(run.current !== null);
      const empty = (model.doc.blocks ?? []).length === 0;
      return setState({
        phase: 'failed',
        error: empty
          ? 'The model is empty: add blocks from the palette in the editor, and an Output for each signal to plot.'
          : 'The model has nothing to plot: add an Output block (in the Routing group) for each signal to record and plot, or probe a signal.',
      });
    }
    const body = { model: serialize(doc, model.style), solver: options.solver };
    const keys = options.solver === 'bdf' ? ['step', 'stop', 'rtol', 'atol'] : ['step', 'stop'];
    for (const k of keys) {
      const text = options[k].trim();
      if (text === '') continue;
      if (!Number.isFinite(Number(text))) {
        setStale(run.current !== null);
        return setState({ phase: 'failed', error: `${k}: “${text}” is not a number; give one such as 0.001 or 1e-6` });
      }
      body[k] = Number(text);
    }
    setState({ phase: 'starting' });
    const r = await api('POST', '/api/simulations', body);
    if (!r.ok) {
      setStale(run.current !== null);
      return setState({ phase: 'failed', error: describeError(r.json ?? { error: r.text }), place: r.json?.place });
    }
    const status = r.json;
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
    setZoom(null);
    setState({ phase: 'running' });
    // Four draws a second while rows stream in: each draw is composited
    // by the browser on the CPU the simulation also needs.
    const redraw = throttled(() => {
      if (run.current !== current || current.ended) return;
      draw();
    }, STREAMING_REDRAW_MS);
    const ws = socket(`/api/simulations/${status.id}/stream`);
    current.ws = ws;
    // A socket that closes before the end leaves the run failed, not running.
    ws.onclose = () => {
      if (run.current !== current || current.ended) return;
      current.ended = true;
      setState({ phase: 'failed', error: 'the connection to the server closed before the simulation ended; run it again' });
    };
    ws.onmessage = (m) => {
      if (run.current !== current) return;
      const { columns } = current;
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
      if (message.type === 'progress') bus.current.dispatchEvent(new CustomEvent('progress', { detail: message }));
      if (message.type === 'end') {
        const end = columns.rows > 0 ? columns.data[0][columns.rows - 1] : current.range[1];
        if (end > current.range[0] && end !== current.range[1]) {
          current.range[1] = end;
          envelope(current);
        }
        current.ended = true;
        setFinals(names.slice(1).map((n, i) => ({ name: n, unit: unitOf(current.units, n), last: columns.last(i + 1) })));
        setState({ phase: message.state, rows: message.rows, error: message.error, summary: message.summary });
        if (plot.current) draw();
        else current.plotted = performance.now() - current.started;
      }
    };
    // The chart is made once the socket is asked for, so rows are on their way meanwhile.
    build();
  };
  const startRef = useRef(start);
  startRef.current = start;
  // Ctrl+Enter runs, also from the option fields.
  useEffect(() => {
    if (!active) return undefined;
    const key = (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        startRef.current();
      }
    };
    window.addEventListener('keydown', key);
    return () => window.removeEventListener('keydown', key);
  }, [active]);

  const cancel = () => job && api('DELETE', `/api/simulations/${job.id}`);
  const toggle = (c) => {
    const next = shown.includes(c) ? shown.filter((x) => x !== c) : [...shown, c].sort((a, b) => a - b);
    setShown(next);
    run.current.shown = next;
    build();
  };
  const exportName = String(model.doc.name ?? 'model').replace(/[^A-Za-z0-9_-]+/g, '_');
  const savePng = async () => plot.current && download(await pngOf(plot.current, run.current.colors), `${exportName}.png`);
  const saveSvg = () =>
    plot.current && download(new Blob([svgOf(plot.current, run.current.colors)], { type: 'image/svg+xml' }), `${exportName}.svg`);
  const set = (k) => (v) => setOptions((o) => ({ ...o, [k]: v }));
  const busy = state.phase === 'running' || state.phase === 'starting';
  const r = run.current;

  return (
    <div className="run">
      <Card className="run-toolbar" size="1">
        <Flex gap="3" align="end" wrap="wrap">
          <label className="run-field">
            <Text size="1" color="gray" weight="medium">
              Solver
            </Text>
            <select className="native-select run-select" aria-label="solver" value={options.solver} onChange={(e) => set('solver')(e.target.value)}>
              {SOLVERS.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </label>
          <Field label="Step" name="step" value={options.step} onChange={set('step')} unit="s" />
          <Field label="Stop time" name="stop" value={options.stop} onChange={set('stop')} unit="s" />
          {options.solver === 'bdf' && (
            <>
              <Field label="Relative tolerance" name="rtol" value={options.rtol} onChange={set('rtol')} />
              <Field label="Absolute tolerance" name="atol" value={options.atol} onChange={set('atol')} />
            </>
          )}
          <Flex gap="2">
            <Tooltip content="Run the model (Ctrl+Enter)">
              <Button onClick={start} disabled={busy}>
                <PlayIcon /> Run
              </Button>
            </Tooltip>
            <Button variant="soft" color="gray" onClick={cancel} disabled={state.phase !== 'running'}>
              <StopIcon /> Cancel
            </Button>
          </Flex>
          <Flex className="run-status" gap="2" align="center" data-testid="run-state" data-run={job?.id ?? ''} data-plotted-ms={state.plotted?.toFixed(0)}>
            <Badge size="2" variant="soft" color={PHASE_COLOR[state.phase] ?? 'gray'}>
              {state.phase}
            </Badge>
            {busy ? (
              <Live bus={bus.current} />
            ) : (
              state.rows !== undefined && (
                <Text size="1" color="gray">
                  {state.rows.toLocaleString('en')} rows
                </Text>
              )
            )}
            {state.plotted !== undefined && (
              <Text size="1" color="gray">
                · plotted {(state.plotted / 1000).toFixed(2)} s after Run
              </Text>
            )}
            {state.summary && (
              <Text size="1" color="gray" className="run-summary" title={state.summary}>
                {state.summary}
              </Text>
            )}
          </Flex>
        </Flex>
      </Card>
      {state.error && (
        <Callout.Root color="red" role="alert" size="1">
          <Callout.Icon>
            <ExclamationTriangleIcon />
          </Callout.Icon>
          <Callout.Text data-testid="run-error" className="run-error">
            {state.error}
          </Callout.Text>
          {state.place?.block && onShowBlock && (
            <Box>
              <Button size="1" variant="soft" color="red" onClick={() => onShowBlock(state.place)}>
                <Crosshair1Icon /> Show block {state.place.block} in the editor
              </Button>
            </Box>
          )}
        </Callout.Root>
      )}
      <div className="run-body" data-stale={stale || undefined} data-testid="run-body">
        <Card className="run-chart-card" size="1">
          <Flex className="run-chart-head" align="center" gap="2">
            <Heading size="2" className="run-title">
              {job ? job.name || model.doc.name : 'Outputs'}
            </Heading>
            {stale && (
              <Badge color="amber" variant="soft" data-testid="run-stale">
                previous run {job.id}: out of date, the last Run failed
              </Badge>
            )}
            {zoom && (
              <Badge variant="soft" color="indigo">
                {Number(zoom[0].toPrecision(4))} – {Number(zoom[1].toPrecision(4))} s
              </Badge>
            )}
            {zoom && (
              <Button size="1" variant="ghost" onClick={resetZoom}>
                <ResetIcon /> Reset zoom
              </Button>
            )}
            <Flex gap="2" ml="auto">
              {job ? (
                <Button size="1" variant="soft" asChild>
                  <a href={`/api/simulations/${job.id}/csv`} download={`${exportName}.csv`}>
                    <TableIcon /> CSV
                  </a>
                </Button>
              ) : (
                <Button size="1" variant="soft" disabled>
                  <TableIcon /> CSV
                </Button>
              )}
              <Button size="1" variant="soft" onClick={savePng} disabled={!job}>
                <ImageIcon /> PNG
              </Button>
              <Button size="1" variant="soft" onClick={saveSvg} disabled={!job}>
                <DownloadIcon /> SVG
              </Button>
            </Flex>
          </Flex>
          <div className="run-chart-area">
            <div ref={box} className="run-chart" data-testid="chart" />
            {!job && (
              <Flex className="run-empty" direction="column" align="center" justify="center" gap="2">
                <PlayIcon width="28" height="28" />
                <Text size="2">Run the model to plot its outputs</Text>
                <Text size="1" color="gray">
                  <kbd>Ctrl</kbd>+<kbd>Enter</kbd> runs it; drag on the chart to zoom, double-click to see it all
                </Text>
              </Flex>
            )}
          </div>
        </Card>
        <Card className="run-side" size="1">
          <div className="run-side-scroll">
            <Box p="1">
              <RunInputs doc={model.doc} inputs={inputs} setInputs={setInputs} probes={probes} setProbes={setProbes} />
              <Signals bus={bus.current} run={r} names={job?.columns} shown={shown} toggle={toggle} />
              {finals.length > 0 && (
                <>
                  <Heading size="2" mt="4" mb="2">
                    Final values
                  </Heading>
                  <TableRoot className="finals">
                    <Table.Header>
                      <Table.Row>
                        <Table.ColumnHeaderCell>Output</Table.ColumnHeaderCell>
                        <Table.ColumnHeaderCell justify="end">Final value</Table.ColumnHeaderCell>
                      </Table.Row>
                    </Table.Header>
                    <Table.Body>
                      {finals.map((f) => (
                        <Table.Row key={f.name}>
                          <Table.RowHeaderCell>
                            {f.name}
                            {f.unit && (
                              <Text as="div" size="1" color="gray">
                                {f.unit}
                              </Text>
                            )}
                          </Table.RowHeaderCell>
                          <Table.Cell justify="end" className="run-number" data-testid={`final-${f.name}`}>
                            {String(f.last)}
                          </Table.Cell>
                        </Table.Row>
                      ))}
                    </Table.Body>
                  </TableRoot>
                </>
              )}
            </Box>
          </div>
        </Card>
      </div>
    </div>
  );
}
