// The model an offline run sends: inputs given values, probes recorded
// against the EV speed controller whose plots were once flat.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inputsOf, prepared, probeId } from './offline.js';

const doc = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), '../../models/examples/ev_speed_controller.json'), 'utf8'));

test('the inputs are the top-level scalar Inports, with defaults and units', () => {
  assert.deepEqual(inputsOf(doc).map((i) => [i.id, i.default, i.unit]), [
    ['vehicle_speed', 0, 'm/s'],
    ['speed_setpoint', 0, 'm/s'],
    ['bms_status', 0, ''],
  ]);
});

test('an input becomes a Constant, or a Step from its default at a time; the rest is the model as it is', () => {
  const run = prepared(doc, { speed_setpoint: { value: '15', at: '' }, vehicle_speed: { value: '5', at: '2' }, bms_status: { value: '', at: '' } });
  const by = Object.fromEntries(run.blocks.map((b) => [b.id, b]));
  assert.deepEqual(by.speed_setpoint, { id: 'speed_setpoint', type: 'Constant', params: { value: 15 } });
  assert.deepEqual(by.vehicle_speed, { id: 'vehicle_speed', type: 'Step', params: { time: 2, before: 0, after: 5 } });
  assert.equal(by.bms_status.type, 'Inport');
  assert.deepEqual(run.links, doc.links);
  assert.equal(doc.blocks[1].type, 'Inport', 'the model itself is unchanged');
  assert.throws(() => prepared(doc, { speed_setpoint: { value: 'fast', at: '' } }), /input speed_setpoint: “fast” is not a number/);
  assert.throws(() => prepared(doc, { speed_setpoint: { value: '1', at: '-1' } }), /not a number ≥ 0/);
});

test('a probe is an Output linked from the signal, with an id no block has', () => {
  const run = prepared(doc, {}, ['pi', 'error']);
  assert.deepEqual(run.blocks.slice(-2), [
    { id: 'probe_pi', type: 'Output' },
    { id: 'probe_error', type: 'Output' },
  ]);
  assert.deepEqual(run.links.find((l) => l.from === 'pi').to, ['torque_limit', 'brake_demand', 'probe_pi']);
  assert.equal(probeId({ blocks: [{ id: 'probe_a_2' }] }, 'a.2'), 'probe_a_2_2');
  assert.throws(() => prepared(doc, {}, ['nowhere']), /probe nowhere: the model has no block nowhere/);
});
