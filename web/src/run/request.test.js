// What the Run view posts for an offline run, or the words it shows
// instead: the model as run (probes added), the solver's options typed
// as numbers, only those the solver takes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from './request.js';

const options = (solver, typed = {}) => ({ solver, step: '', stop: '', rtol: '', atol: '', ...typed });

// y' = -y from 1, its value recorded by an Output.
const decay = {
  blocks: [
    { id: 'k', type: 'Gain', params: { gain: -1 } },
    { id: 'x', type: 'Integrator', params: { initial: 1 } },
    { id: 'y', type: 'Output', params: { unit: 'm' } },
  ],
  links: [
    { from: 'x', to: ['k', 'y'] },
    { from: 'k', to: 'x' },
  ],
};

test('an empty model and one without an Output are refused with what to add', () => {
  assert.match(request({ doc: { blocks: [], links: [] } }, options('rk4')).error, /The model is empty: add blocks/);
  const unrecorded = { blocks: decay.blocks.slice(0, 2), links: [{ from: 'x', to: 'k' }, { from: 'k', to: 'x' }] };
  assert.match(request({ doc: unrecorded }, options('rk4')).error, /nothing to plot: add an Output block/);
});

test('a probed signal makes a model without an Output one to run, the probe in the document posted', () => {
  const unrecorded = { blocks: decay.blocks.slice(0, 2), links: [{ from: 'x', to: 'k' }, { from: 'k', to: 'x' }] };
  const { doc, body, error } = request({ doc: unrecorded }, options('rk4'), {}, ['x']);
  assert.equal(error, undefined);
  assert.deepEqual(doc.blocks.at(-1), { id: 'probe_x', type: 'Output' });
  assert.ok(JSON.parse(body.model).blocks.some((b) => b.id === 'probe_x'));
});

test('options typed are sent as numbers, blanks left to the model, tolerances only to the BDF', () => {
  const typed = { step: ' 0.01 ', stop: '2', rtol: '1e-8', atol: '' };
  assert.deepEqual(request({ doc: decay }, options('bdf', typed)).body, {
    model: request({ doc: decay }, options('bdf')).body.model,
    solver: 'bdf',
    step: 0.01,
    stop: 2,
    rtol: 1e-8,
  });
  const fixed = request({ doc: decay }, options('rk4', typed)).body;
  assert.deepEqual([fixed.step, fixed.stop, 'rtol' in fixed], [0.01, 2, false]);
  assert.deepEqual(JSON.parse(fixed.model), decay);
});

test('an option that is not a number is named with what was typed', () => {
  assert.equal(
    request({ doc: decay }, options('bdf', { rtol: 'tight' })).error,
    'rtol: “tight” is not a number; give one such as 0.001 or 1e-6',
  );
  assert.match(request({ doc: decay }, options('rk4', { stop: '1s' })).error, /^stop: “1s” is not a number/);
});
