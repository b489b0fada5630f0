// Real-time runs: a run started from a configuration in the served
// folder (picked from config/ and config/examples/, or typed), the list
// of runs with their configuration, start time and state, and the
// selected run live (LiveRun.jsx).
import { useEffect, useRef, useState } from 'react';
import { Badge, Button, Callout, Card, Checkbox, Flex, Heading, Text, TextField } from '@radix-ui/themes';
import { ExclamationTriangleIcon, PlayIcon } from '@radix-ui/react-icons';
import { api } from './api.js';
import { LiveRun, StateBadge } from './LiveRun.jsx';
import { Choice, Field } from './components/fields.jsx';
import './dashboard.css';

/** A run's start (s since the Unix epoch) as the list shows it: the time of day, and the date when not today. */
function startTime(seconds) {
  const at = new Date(seconds * 1000);
  const time = at.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit', second: '2-digit' });
  return at.toDateString() === new Date().toDateString() ? time : `${at.toLocaleDateString('en-GB')} ${time}`;
}

/** Where run configurations are looked for. */
const CONFIG_DIRS = ['config', 'config/examples'];

/** The run configurations in the served folder's CONFIG_DIRS (`.toml` files, Cargo's manifests aside). */
function useConfigs() {
  const [configs, setConfigs] = useState([]);
  useEffect(() => {
    Promise.all(CONFIG_DIRS.map((dir) => api('GET', `/api/files?dir=${encodeURIComponent(dir)}`))).then((answers) =>
      setConfigs(
        answers.flatMap((r, i) =>
          r.ok ? r.json.entries.filter((e) => e.kind === 'file' && e.name.endsWith('.toml') && e.name !== 'Cargo.toml').map((e) => `${CONFIG_DIRS[i]}/${e.name}`) : [],
        ),
      ),
    );
  }, []);
  return configs;
}

function StartForm({ onStarted }) {
  const configs = useConfigs();
  const [form, setForm] = useState({ config: 'config/examples/cruise.toml', virtual: true, pace: '1', duration: '' });
  const [error, setError] = useState('');
  const start = async () => {
    const body = { config: form.config, virtual_clock: form.virtual };
    for (const [key, text, used] of [
      ['pace', form.pace, form.virtual],
      ['duration', form.duration, true],
    ]) {
      if (!used || text.trim() === '') continue;
      if (!(Number(text) > 0)) return setError(`${key}: “${text}” is not a number > 0; give one such as 1 or 30, or leave it empty`);
      body[key] = Number(text);
    }
    const r = await api('POST', '/api/runs', body);
    if (!r.ok) return setError(r.json?.error ?? r.text);
    setError('');
    onStarted(r.json);
  };
  return (
    <Card size="2">
      <Heading size="3" mb="3">
        New run
      </Heading>
      <Flex direction="column" gap="3">
        <Field as="div" label="Configuration" hint="or a path in the served folder">
          <Choice label="configuration" value={configs.includes(form.config) ? form.config : ''} onChange={(config) => setForm({ ...form, config })} options={configs} placeholder="another path…" />
          <TextField.Root aria-label="configuration path" value={form.config} onChange={(e) => setForm({ ...form, config: e.target.value })} size="1" />
        </Field>
        <Text as="label" size="2">
          <Flex gap="2" align="center">
            <Checkbox aria-label="virtual clock" checked={form.virtual} onCheckedChange={(v) => setForm({ ...form, virtual: v === true })} />
            Virtual clock
          </Flex>
        </Text>
        <Flex gap="3">
          <Field as="div" label="Pace" hint={form.virtual ? 'run time per wall time' : 'virtual clock only'}>
            <TextField.Root aria-label="pace" value={form.virtual ? form.pace : ''} placeholder={form.virtual ? 'fastest' : '1'} disabled={!form.virtual} onChange={(e) => setForm({ ...form, pace: e.target.value })}>
            </TextField.Root>
          </Field>
          <Field as="div" label="Duration" hint="empty: the configuration's">
            <TextField.Root aria-label="duration" value={form.duration} placeholder="from file" onChange={(e) => setForm({ ...form, duration: e.target.value })}>
              <TextField.Slot side="right">s</TextField.Slot>
            </TextField.Root>
          </Field>
        </Flex>
        <Button onClick={start} disabled={form.config.trim() === ''}>
          <PlayIcon /> Start run
        </Button>
        {error && (
          <Callout.Root color="red" size="1" role="alert">
            <Callout.Icon>
              <ExclamationTriangleIcon />
            </Callout.Icon>
            <Callout.Text data-testid="start-error">{error}</Callout.Text>
          </Callout.Root>
        )}
      </Flex>
    </Card>
  );
}

/**
 * The dashboard of real-time runs; polls the list while `active`, and
 * shows the only run under way when none is picked.
 */
export function Dashboard({ active }) {
  const [runs, setRuns] = useState([]);
  const [selected, setSelected] = useState(null);
  // Runs started here that no list has shown yet: a list asked for before
  // the start must not drop them.
  const fresh = useRef([]);
  useEffect(() => {
    if (!active) return undefined;
    const poll = async () => {
      const r = await api('GET', '/api/runs');
      if (!r.ok) return;
      const listed = r.json.runs;
      fresh.current = fresh.current.filter((run) => !listed.some((l) => l.id === run.id));
      setRuns([...listed, ...fresh.current]);
      // Nothing picked yet and one run under way: that is the run to watch.
      const running = listed.filter((l) => l.state === 'running');
      if (running.length === 1) setSelected((s) => s ?? running[0].id);
    };
    poll();
    const timer = setInterval(poll, 1000);
    return () => clearInterval(timer);
  }, [active]);
  const started = (run) => {
    fresh.current = [...fresh.current, run];
    setRuns((rs) => [...rs.filter((r) => r.id !== run.id), run]);
    setSelected(run.id);
  };
  const run = runs.find((r) => r.id === selected);
  return (
    <div className="dashboard">
      <Flex direction="column" gap="3" className="dash-side">
        <StartForm onStarted={started} />
        <Card size="1" className="run-list">
          <Heading size="2" mb="2" ml="1">
            Runs
          </Heading>
          {runs.length === 0 && (
            <Text as="p" size="2" color="gray" ml="1">
              No runs yet.
            </Text>
          )}
          <Flex direction="column" gap="1" asChild>
            <ul aria-label="runs" className="runs-scroll">
                {[...runs].reverse().map((r) => (
                  <li key={r.id}>
                    <button className="run-item" aria-current={r.id === selected} onClick={() => setSelected(r.id)} data-testid={`run-${r.id}`}>
                      <Badge variant="outline" color="gray" className="number">
                        {r.id}
                      </Badge>
                      <span className="run-name">
                        <Text as="div" size="2" truncate>
                          <Text weight="medium">{r.name}</Text>{' '}
                          <Text size="1" color="gray">
                            {r.clock}
                          </Text>
                        </Text>
                        <Text as="div" size="1" color="gray" truncate data-testid={`about-${r.id}`} title={r.config}>
                          {r.config?.split('/').pop()}
                          {r.started ? ` · ${startTime(r.started)}` : ''}
                        </Text>
                      </span>
                      <StateBadge state={r.state} />
                    </button>
                  </li>
                ))}
            </ul>
          </Flex>
        </Card>
      </Flex>
      <div className="dash-main">
        {run ? (
          <LiveRun key={run.id} run={run} />
        ) : (
          <Flex align="center" justify="center" className="empty">
            <Text color="gray" size="2">
              Start a run, or pick one from the list, to watch it live.
            </Text>
          </Flex>
        )}
      </div>
    </div>
  );
}
