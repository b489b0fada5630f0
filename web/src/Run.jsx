// An offline simulation of the model being edited: the solver options,
// values for its inputs and probes of its signals (RunInputs.jsx),
// rows plotted as they stream in (per pixel column, the extremes of each
// series), one y axis per unit, a legend of the values under the cursor,
// zoom (drag on the chart, double-click to reset) redrawn from the full
// rows, the final values, and the results as CSV, PNG or SVG. A Run that
// fails before it begins leaves the previous result shown as out of date,
// its error in words with a button to the block it names.
import { useEffect, useRef, useState } from 'react';
import { Box, Button, Callout, Card } from '@radix-ui/themes';
import { Crosshair1Icon, ExclamationTriangleIcon } from '@radix-ui/react-icons';
import { RunInputs } from './RunInputs.jsx';
import { ChartCard } from './run/ChartCard.jsx';
import { Finals } from './run/Finals.jsx';
import { RunToolbar } from './run/RunToolbar.jsx';
import { Signals } from './run/Signals.jsx';
import { useChart } from './run/useChart.js';
import { useOptions } from './run/useOptions.js';
import { useRunKey } from './run/useRunKey.js';
import { useSimulation } from './run/useSimulation.js';
import { modelStore, showBlock, useStore } from './store.js';
import './run.css';

/** Why the last Run failed, with a button to the block the error names. */
function RunError({ state, onShowBlock }) {
  return (
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
  );
}

/** The Run view of the model being edited (store.js). */
export function Run({ active = true }) {
  const model = useStore(modelStore);
  const [options, set] = useOptions(model);
  const [state, setState] = useState({ phase: 'idle' });
  // Values for the model's inputs and the signals probed, for the runs only (RunInputs.jsx).
  const [inputs, setInputs] = useState({});
  const [probes, setProbes] = useState([]);
  useEffect(() => {
    setInputs({});
    setProbes([]);
  }, [model.generation]);
  // Progress while running and the row under the cursor go to <Live> and
  // <Signals> alone: the rest of the view does not render again for them.
  const bus = useRef(new EventTarget()).current;
  const chart = useChart({ active, bus, setState });
  const { job, stale, finals, shown, start, cancel, toggle } = useSimulation({ model, options, inputs, probes, chart, bus, state, setState });
  useRunKey(active, start);

  return (
    <div className="run">
      <RunToolbar options={options} set={set} onStart={start} onCancel={cancel} job={job} state={state} bus={bus} />
      {state.error && <RunError state={state} onShowBlock={showBlock} />}
      <div className="run-body" data-stale={stale || undefined} data-testid="run-body">
        <ChartCard job={job} doc={model.doc} stale={stale} chart={chart} />
        <Card className="run-side" size="1">
          <div className="run-side-scroll">
            <Box p="1">
              <RunInputs doc={model.doc} inputs={inputs} setInputs={setInputs} probes={probes} setProbes={setProbes} />
              <Signals bus={bus} run={chart.run.current} names={job?.columns} shown={shown} toggle={toggle} />
              <Finals finals={finals} />
            </Box>
          </div>
        </Card>
      </div>
    </div>
  );
}
