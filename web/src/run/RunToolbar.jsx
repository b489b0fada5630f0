// The Run view's toolbar: the solver options, Run and Cancel, and the
// phase of the run with its rows, plot time and summary.
import { Badge, Button, Card, Flex, Text, TextField, Tooltip } from '@radix-ui/themes';
import { PlayIcon, StopIcon } from '@radix-ui/react-icons';
import { Choice, Field } from '../components/fields.jsx';
import { Live } from './Live.jsx';

const SOLVERS = ['rk4', 'heun', 'euler', 'bdf'];
const PHASE_COLOR = { idle: 'gray', starting: 'blue', running: 'blue', done: 'green', failed: 'red', cancelled: 'amber' };

/** One option typed as text, with its unit. */
function Option({ label, name, value, onChange, unit, width = 96 }) {
  return (
    <Field label={label} className="run-field">
      <TextField.Root size="2" aria-label={name} value={value} onChange={(e) => onChange(e.target.value)} style={{ width }}>
        {unit && <TextField.Slot side="right">{unit}</TextField.Slot>}
      </TextField.Root>
    </Field>
  );
}

/** The phase of the run (`state`) and what is known of it. */
function Status({ job, state, busy, bus }) {
  return (
    <Flex className="run-status" gap="2" align="center" data-testid="run-state" data-run={job?.id ?? ''} data-plotted-ms={state.plotted?.toFixed(0)}>
      <Badge size="2" variant="soft" color={PHASE_COLOR[state.phase] ?? 'gray'}>
        {state.phase}
      </Badge>
      {busy ? (
        <Live bus={bus} />
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
  );
}

/** The toolbar; `set(key)(text)` types an option. */
export function RunToolbar({ options, set, onStart, onCancel, job, state, bus }) {
  const busy = state.phase === 'running' || state.phase === 'starting';
  return (
    <Card className="run-toolbar" size="1">
      <Flex gap="3" align="end" wrap="wrap">
        <Field label="Solver" className="run-field">
          <Choice label="solver" className="run-select" value={options.solver} options={SOLVERS} onChange={set('solver')} />
        </Field>
        <Option label="Step" name="step" value={options.step} onChange={set('step')} unit="s" />
        <Option label="Stop time" name="stop" value={options.stop} onChange={set('stop')} unit="s" />
        {options.solver === 'bdf' && (
          <>
            <Option label="Relative tolerance" name="rtol" value={options.rtol} onChange={set('rtol')} />
            <Option label="Absolute tolerance" name="atol" value={options.atol} onChange={set('atol')} />
          </>
        )}
        <Flex gap="2">
          <Tooltip content="Run the model (Ctrl+Enter)">
            <Button onClick={onStart} disabled={busy}>
              <PlayIcon /> Run
            </Button>
          </Tooltip>
          <Button variant="soft" color="gray" onClick={onCancel} disabled={state.phase !== 'running'}>
            <StopIcon /> Cancel
          </Button>
        </Flex>
        <Status job={job} state={state} busy={busy} bus={bus} />
      </Flex>
    </Card>
  );
}
