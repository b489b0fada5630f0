// One real-time run, live: its state and progress, counters, the recorded
// outputs (a chart of the last 2000 rows with one y axis per unit, as the
// Run view draws it, and a legend of the values under the cursor or the
// latest, with units), the files it writes to download, whether its
// [ecu] was left unstarted, the latency histogram,
// the buses' counters, and changes of inputs and block parameters with
// their log; stopping it asks first. Tables are plain ones: Radix Themes'
// Table writes an inline style element, which the page's content security
// policy refuses.
import { useState } from 'react';
import { Badge, Box, Button, Callout, Card, Flex, Grid, Heading, Progress, Text, TextField } from '@radix-ui/themes';
import { DownloadIcon, ExclamationTriangleIcon, StopIcon } from '@radix-ui/react-icons';
import { api, fetchFile } from './api.js';
import { useConfirm } from './confirm.jsx';
import { LatencyHistogram } from './LatencyHistogram.jsx';
import { Legend } from './Legend.jsx';
import { download } from './plot.js';
import { formatCount, formatNs, formatValue } from './readout.js';
import { Choice } from './components/fields.jsx';
import { useLiveStream } from './dashboard/useLiveStream.js';

const STATE_COLOR = { running: 'blue', done: 'green', stopped: 'amber', failed: 'red' };

/** A run's state as a badge. */
export function StateBadge({ state, ...rest }) {
  return (
    <Badge color={STATE_COLOR[state] ?? 'gray'} variant="soft" {...rest}>
      {state}
    </Badge>
  );
}

function Counter({ label, children, testid, tone }) {
  return (
    <Card size="1" className="counter">
      <Text as="div" size="1" color="gray">
        {label}
      </Text>
      <Text as="div" size="4" weight="medium" className="number" color={tone} data-testid={testid}>
        {children}
      </Text>
    </Card>
  );
}

function Counters({ stats, run }) {
  const sources = stats?.sources || {};
  return (
    <Grid columns={{ initial: '3', lg: '6' }} gap="2">
      <Counter label="Run time" testid="run-t">
        {stats ? formatValue(stats.t, 's') : '–'}
      </Counter>
      <Counter label="Frames" testid="run-frames">
        {formatCount(stats?.frames ?? run.frames)}
      </Counter>
      <Counter label="Missed" testid="run-missed" tone={stats?.missed > 0 ? 'red' : undefined}>
        {formatCount(stats?.missed)}
      </Counter>
      <Counter label="Unusable results" testid="run-unusable" tone={stats?.unusable > 0 ? 'red' : undefined}>
        {formatCount(stats?.unusable)}
      </Counter>
      <Counter label="Wake-up p50 / p99" testid="run-wake">
        {stats?.wake_ns ? `${formatNs(stats.wake_ns.p50)} / ${formatNs(stats.wake_ns.p99)}` : '–'}
      </Counter>
      <Counter label="Compute p99" testid="run-compute">
        {stats?.compute_ns ? formatNs(stats.compute_ns.p99) : '–'}
      </Counter>
      <Counter label="Stalls (longest)" testid="run-stalls" tone={stats?.stalls?.count > 0 ? 'orange' : undefined}>
        {stats?.stalls
          ? `${formatCount(stats.stalls.count)}${stats.stalls.count > 0 ? ` (${formatNs(stats.stalls.longest_ms * 1e6)})` : ''}`
          : '–'}
      </Counter>
      {Object.keys(sources).length > 0 && (
        <Card size="1" className="counter sources">
          <Text as="div" size="1" color="gray">
            Frame results from
          </Text>
          <Flex gap="4" wrap="wrap">
            {Object.entries(sources).map(([k, v]) => (
              <Text key={k} size="2">
                {k}{' '}
                <Text weight="medium" className="number" data-testid={`run-source-${k}`}>
                  {formatCount(v)}
                </Text>
              </Text>
            ))}
          </Flex>
        </Card>
      )}
    </Grid>
  );
}

/** A device's counters: the numbers, and the percentiles of its timed paths. */
function Bus({ name, counts }) {
  const entries = Object.entries(counts);
  const numbers = entries.filter(([, v]) => typeof v === 'number');
  const paths = entries.filter(([, v]) => v && typeof v === 'object' && 'count' in v);
  const e2e = Object.entries(counts.e2e ?? {});
  const faults = counts.faults ?? [];
  const bad = /error|timeout|malformed|wrong|bus-off|dropped|full|disconnect|unmapped|clamped/;
  return (
    <Card size="1" data-testid={`bus-${name}`}>
      <Heading size="2" mb="2">
        {name}
      </Heading>
      <table className="dash-table">
        <tbody>
          {numbers.map(([k, v]) => (
            <tr key={k}>
              <th scope="row">{k}</th>
              <td className="number end" data-testid={`bus-${name}-${k}`}>
                <Text color={v > 0 && bad.test(k) ? 'red' : undefined}>{formatCount(v)}</Text>
              </td>
            </tr>
          ))}
          {paths.map(([k, v]) => (
            <tr key={k}>
              <th scope="row">{k}</th>
              <td className="number end">
                {v.count > 0 ? `p50 ${formatNs(v.p50_ns)}, p99 ${formatNs(v.p99_ns)}` : '–'}
              </td>
            </tr>
          ))}
          {e2e.map(([message, c]) => {
            const refused = c.repeated + c['wrong sequence'] + c.crc + c.length + c['data id'] + c.counter;
            return (
              <tr key={`e2e ${message}`}>
                <th scope="row">e2e {message}</th>
                <td className="number end" data-testid={`bus-${name}-e2e-${message}`}>
                  {formatCount(c.ok)} ok, <Text color={refused > 0 ? 'red' : undefined}>{formatCount(refused)} refused</Text>, {formatCount(c.timeouts)} timeouts
                </td>
              </tr>
            );
          })}
          {faults.map((f, i) => (
            <tr key={`fault ${i}`}>
              <th scope="row">fault {f.fault}</th>
              <td className="number end" data-testid={`bus-${name}-fault-${i}`}>
                {f.began_frame === null ? 'not yet' : `${formatCount(f.affected)} frames affected${f.ended_frame === null ? ', acting' : ''}`}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Card>
  );
}

function Changes({ run, ended, changes, units }) {
  const tunable = run.tunable;
  const [change, setChange] = useState({ kind: tunable.length > 0 ? 'block' : 'input', input: run.inputs[0] || '', block: '', param: '', value: '' });
  const [answer, setAnswer] = useState(null);
  const blocks = Array.from(new Set(tunable.map((t) => t.block)));
  const params = tunable.filter((t) => t.block === change.block);
  const current = params.find((t) => t.param === change.param);
  const send = async () => {
    if (!ready) return;
    const value = Number(change.value);
    const body =
      change.kind === 'input'
        ? { input: change.input, value }
        : { block: change.block, param: change.param, value: change.value.trim() !== '' && Number.isFinite(value) ? value : change.value };
    const r = await api('POST', `/api/runs/${run.id}/changes`, body);
    setAnswer(r.ok ? { ok: true, text: `${r.json.what} = ${JSON.stringify(r.json.value)}: requested for frame ${formatCount(r.json.applies_at_frame)}` } : { ok: false, text: r.json?.error ?? r.text });
  };
  // An input takes a number; a block parameter a number or a JSON value.
  const number = change.value.trim() !== '' && Number.isFinite(Number(change.value));
  const ready =
    change.kind === 'input' ? change.input !== '' && number : change.block !== '' && change.param !== '' && change.value.trim() !== '';
  return (
    <Card>
      <Flex justify="between" align="center" mb="2">
        <Heading size="3">Change while running</Heading>
        {ended && <Text size="1" color="gray">the run has ended</Text>}
      </Flex>
      <fieldset className="change-form" disabled={ended} data-testid="change-form">
        <Flex gap="2" align="center" wrap="wrap">
          {tunable.length > 0 && run.inputs.length > 0 && (
            <Choice label="change kind" value={change.kind} disabled={ended} onChange={(kind) => setChange({ ...change, kind })} options={[['block', 'block parameter'], ['input', 'input']]} />
          )}
          {change.kind === 'input' ? (
            <Choice label="input" value={change.input} disabled={ended} onChange={(input) => setChange({ ...change, input })} options={run.inputs} placeholder="input…" />
          ) : (
            <>
              <Choice label="block" value={change.block} disabled={ended} onChange={(block) => setChange({ ...change, block, param: '' })} options={blocks} placeholder="block…" />
              <Choice label="parameter" value={change.param} disabled={ended || !change.block} onChange={(param) => setChange({ ...change, param })} options={params.map((t) => t.param)} placeholder="parameter…" />
            </>
          )}
          <TextField.Root
            aria-label="new value"
            value={change.value}
            disabled={ended}
            placeholder={current ? `now ${JSON.stringify(current.value)}` : change.kind === 'input' && units[change.input] ? `value in ${units[change.input]}` : 'value'}
            onChange={(e) => setChange({ ...change, value: e.target.value })}
            onKeyDown={(e) => e.key === 'Enter' && ready && send()}
            className="value-field"
          />
          <Button onClick={send} disabled={ended || !ready}>
            Change
          </Button>
        </Flex>
      </fieldset>
      <Text as="p" size="2" mt="2" color={answer?.ok === false ? 'red' : 'gray'} data-testid="change-answer">
        {answer?.text}
      </Text>
      <ol className="change-log" data-testid="change-log">
        {changes.map((c, i) => (
          <li key={i}>
            <Text size="2">
              <Text weight="medium">{c.what}</Text>
              {'value' in c && ` = ${JSON.stringify(c.value)}`}
              <Text color="gray">
                {c.applied_at_frame !== undefined
                  ? ` applied at frame ${formatCount(c.applied_at_frame)} (t = ${formatValue(c.applied_at, 's')})`
                  : ` requested at ${formatValue(c.requested_at, 's')}`}
              </Text>
            </Text>
          </li>
        ))}
      </ol>
    </Card>
  );
}

/** The kinds of frame faults, and whether each acts on one sent message. */
const FAULT_KINDS = [
  ['drop', true],
  ['delay', true],
  ['repeat', true],
  ['stuck_counter', true],
  ['bad_crc', true],
  ['wrong_length', true],
  ['override', true],
  ['burst', false],
  ['stop', false],
];

/** Injects a frame fault into what one of the run's buses sends. */
function Faults({ run, ended }) {
  const buses = Object.keys(run.faults);
  const [fault, setFault] = useState({ bus: buses[0], kind: 'drop', message: run.faults[buses[0]][0] ?? '', duration: '0.5', extra: '' });
  const [answer, setAnswer] = useState(null);
  const needsMessage = FAULT_KINDS.find(([k]) => k === fault.kind)[1];
  const seconds = Number(fault.duration);
  const ready = (!needsMessage || fault.message !== '') && fault.duration.trim() !== '' && seconds > 0;
  const inject = async () => {
    let extra = {};
    try {
      extra = fault.extra.trim() === '' ? {} : JSON.parse(`{${fault.extra}}`);
    } catch {
      return setAnswer({ ok: false, text: `more keys: “${fault.extra}” is not JSON keys and values, e.g. "delay": 0.02` });
    }
    const body = { bus: fault.bus, kind: fault.kind, duration: seconds, ...extra };
    if (needsMessage) body.message = fault.message;
    const r = await api('POST', `/api/runs/${run.id}/faults`, body);
    setAnswer(r.ok ? { ok: true, text: `${r.json.what}: requested at ${formatValue(r.json.requested_at, 's')}` } : { ok: false, text: r.json?.error ?? r.text });
  };
  return (
    <Card>
      <Heading size="3" mb="2">
        Inject a frame fault
      </Heading>
      <fieldset className="change-form" disabled={ended} data-testid="fault-form">
        <Flex gap="2" align="center" wrap="wrap">
          {buses.length > 1 && <Choice label="bus" value={fault.bus} onChange={(bus) => setFault({ ...fault, bus, message: run.faults[bus][0] ?? '' })} options={buses} />}
          <Choice label="fault kind" value={fault.kind} onChange={(kind) => setFault({ ...fault, kind })} options={FAULT_KINDS.map(([k]) => k)} />
          {needsMessage && <Choice label="message" value={fault.message} onChange={(message) => setFault({ ...fault, message })} options={run.faults[fault.bus]} placeholder="message…" />}
          <TextField.Root aria-label="fault duration" value={fault.duration} onChange={(e) => setFault({ ...fault, duration: e.target.value })} className="value-field">
            <TextField.Slot side="right">s</TextField.Slot>
          </TextField.Root>
          <TextField.Root aria-label="more keys" placeholder={'"delay": 0.02'} value={fault.extra} onChange={(e) => setFault({ ...fault, extra: e.target.value })} />
          <Button color="orange" onClick={inject} disabled={ended || !ready}>
            Inject
          </Button>
        </Flex>
      </fieldset>
      <Text as="p" size="2" mt="2" color={answer?.ok === false ? 'red' : 'gray'} data-testid="fault-answer">
        {answer?.text}
      </Text>
    </Card>
  );
}

/** The run's name, number, state, clock and configuration, and Stop. */
function RunHead({ run, state, ended }) {
  const ask = useConfirm();
  const stop = async () => {
    const yes = await ask({
      title: `Stop run ${run.id}?`,
      description: `${run.name} stops at its next frame; what it has recorded so far stays in results/. A stopped run cannot be resumed.`,
      action: 'Stop run',
    });
    if (yes) await api('DELETE', `/api/runs/${run.id}`);
  };
  return (
    <Flex align="center" gap="3" wrap="wrap">
      <Heading size="5">{run.name}</Heading>
      <Badge variant="outline" color="gray" className="number">
        {run.id}
      </Badge>
      <StateBadge state={state} data-testid="live-state" />
      <Badge variant="soft" color="gray">
        {run.clock} clock
      </Badge>
      <Text size="2" color="gray" className="config-path">
        {run.config}
      </Text>
      <Box flexGrow="1" />
      <Button color="red" variant="soft" onClick={stop} disabled={ended}>
        <StopIcon /> Stop
      </Button>
    </Flex>
  );
}

/** How far the run is, in time and frames. */
function RunProgress({ run, state, frames }) {
  const total = Math.round(run.duration / run.frame);
  return (
    <Box>
      <Progress value={Math.min(100, (100 * frames) / Math.max(1, total))} aria-label="run progress" size="2" color={STATE_COLOR[state]} />
      <Flex justify="between" mt="1">
        <Text size="1" color="gray" data-testid="run-progress">
          {formatValue(frames * run.frame, 's')} of {formatValue(run.duration, 's')}
        </Text>
        <Text size="1" color="gray" className="number">
          frame {formatCount(frames)} of {formatCount(total)} ({formatValue(run.frame * 1000, 'ms')} each)
        </Text>
      </Flex>
    </Box>
  );
}

/** The files the run writes, each downloaded through the API (with the token, when the server asks for one). */
function RunFiles({ files }) {
  const save = async (file) => {
    const r = await fetchFile(file);
    if (r) download(r, file.split('/').pop());
  };
  return (
    <Flex gap="2" align="center" wrap="wrap">
      <Text size="1" color="gray">
        Writes
      </Text>
      {files.map((f) => (
        <Button key={f} size="1" variant="soft" color="gray" onClick={() => save(f)} data-testid={`run-file-${f}`} aria-label={`download ${f}`}>
          <DownloadIcon /> {f}
        </Button>
      ))}
    </Flex>
  );
}

/** A callout of `children` with a warning icon. */
function Warning({ children, ...rest }) {
  return (
    <Callout.Root {...rest}>
      <Callout.Icon>
        <ExclamationTriangleIcon />
      </Callout.Icon>
      <Callout.Text>{children}</Callout.Text>
    </Callout.Root>
  );
}

/** The recorded outputs' chart (in `live.element`) and legend. */
function Outputs({ run, live }) {
  const { element, signals, values } = live;
  return (
    <Card className="chart-card" hidden={run.outputs.length === 0}>
      <Heading size="3" mb="2">
        Outputs
      </Heading>
      <div className="live-plot">
        <div ref={element} className="live-chart" data-testid="live-chart" />
        <div className="live-legend">
          {signals && values.length > 0 ? (
            <Legend names={signals.names} colors={signals.colors} testid="live" value={(c) => values[c]} />
          ) : (
            <Text size="2" color="gray">
              Waiting for the first recorded rows…
            </Text>
          )}
        </div>
      </div>
    </Card>
  );
}

/** The selected run, live from its stream. */
export function LiveRun({ run }) {
  const live = useLiveStream(run);
  const { stats, changes, end } = live;
  const state = end?.state ?? run.state;
  const ended = state !== 'running';
  const error = end?.error ?? run.error;
  const frames = stats?.frames ?? run.frames;
  // At the end, the report's final counts; before, the latest statistics'.
  const devices = Object.entries(end?.report?.buses ?? stats?.devices ?? {});
  return (
    <Flex direction="column" gap="3" className="live">
      <RunHead run={run} state={state} ended={ended} />
      <RunProgress run={run} state={state} frames={frames} />
      {run.ecu && (
        <Warning color="amber" size="1" data-testid="run-ecu">
          {run.ecu}
        </Warning>
      )}
      {run.files?.length > 0 && <RunFiles files={run.files} />}
      {error && (
        <Warning color="red" role="alert">
          {error}
        </Warning>
      )}
      <Counters stats={stats} run={run} />
      <Outputs run={run} live={live} />
      {run.outputs.length === 0 && (
        <Text size="2" color="gray">
          This run records no outputs.
        </Text>
      )}
      <Card>
        <LatencyHistogram stats={stats} clock={run.clock} />
      </Card>
      {devices.length > 0 && (
        <Grid columns={{ initial: '1', md: '2' }} gap="3">
          {devices.map(([name, counts]) => (
            <Bus key={name} name={name} counts={counts} />
          ))}
        </Grid>
      )}
      {(run.tunable.length > 0 || run.inputs.length > 0) && <Changes run={run} ended={ended} changes={changes} units={run.units ?? {}} />}
      {Object.keys(run.faults ?? {}).length > 0 && <Faults run={run} ended={ended} />}
    </Flex>
  );
}
