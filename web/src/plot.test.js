// The units a chart's axes take from a model document, and the round
// steps of the exported SVG's axes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { axisTitle, byUnit, outputUnits, ticks, titleRoom, unitOf, unitRange } from './plot.js';

const examples = join(dirname(fileURLToPath(import.meta.url)), '../../models/examples');

test('the cruise control’s outputs carry the units its file gives', () => {
  const doc = JSON.parse(readFileSync(join(examples, 'cruise_control.json'), 'utf8'));
  const units = outputUnits(doc);
  assert.deepEqual(units, { v: 'm/s', v_ref: 'm/s', force: 'N' });
  assert.deepEqual(byUnit(['time', 'v', 'v_ref', 'force'], units), [
    { unit: 'm/s', columns: [1, 2] },
    { unit: 'N', columns: [3] },
  ]);
});

test('outputs inside subsystems by their path, top-level Outports, elements of a vector, no unit', () => {
  const doc = {
    blocks: [
      { id: 'x', type: 'Outport', params: { unit: 'm' } },
      { id: 'q', type: 'Output' },
      { id: 'cart', type: 'Subsystem', blocks: [{ id: 'speed', type: 'Outport', params: { unit: 'ignored' } }, { id: 'a', type: 'Output', params: { unit: 'm/s2' } }] },
    ],
  };
  const units = outputUnits(doc);
  assert.deepEqual(units, { x: 'm', q: '', 'cart/a': 'm/s2' });
  assert.equal(unitOf(units, 'x[2]'), 'm');
  assert.equal(unitOf(units, 'cart/a'), 'm/s2');
  assert.equal(unitOf(units, 'unknown'), '');
  assert.equal(axisTitle(['x[0]', 'x[1]'], 'm'), 'x[0], x[1] [m]');
  assert.equal(axisTitle(['q'], ''), 'q');
  assert.equal(axisTitle(['a', 'b', 'c', 'd'], 'V'), 'a, b, c, d [V]');
});

test('axis steps are 1, 2 or 5 times a power of ten, inside the range', () => {
  assert.deepEqual(ticks(0, 100), [0, 20, 40, 60, 80, 100]);
  assert.deepEqual(ticks(-0.013, 0.031, 4), [0, 0.02]);
  assert.deepEqual(ticks(-0.05, 0.012, 6), [-0.04, -0.02, 0]);
  assert.deepEqual(ticks(3, 3), [3]);
});

test('an axis title is whole or shortened by signals, never cut', () => {
  const names = ['vehicle_speed', 'motor_speed', 'motor_torque'];
  assert.equal(axisTitle(names, 'rpm', 60), 'vehicle_speed, motor_speed, motor_torque [rpm]');
  assert.equal(axisTitle(names, 'rpm', 40), 'vehicle_speed, motor_speed, … [rpm]');
  assert.equal(axisTitle(names, 'rpm', 24), 'vehicle_speed, … [rpm]');
  assert.equal(axisTitle(names, 'rpm', 10), '[rpm]');
  assert.equal(axisTitle(names, '', 10), '');
  // The dashboard's chart, 260 px high, has room for about 32 characters.
  assert.ok(titleRoom(260) >= 30 && titleRoom(260) * 6.5 <= 260 - 50);
});

test('an axis over a constant with numerical noise is drawn flat, with a range ticks can step through', () => {
  const [lo, hi] = unitRange(80 - 1e-14, 80 + 1e-14);
  assert.ok(lo < 80 && hi > 80 && hi - lo > 1e-3, `${lo} .. ${hi}`);
  const [a, b] = unitRange(0, 2500);
  assert.ok(a <= 0 && b >= 2500);
  const [z0, z1] = unitRange(0, 0);
  assert.ok(z0 < 0 || z1 > 0, 'a constant zero still has a range');
  assert.deepEqual(unitRange(null, null), [null, null]);
});
