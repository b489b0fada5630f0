// Formatting of the dashboard's values and the units a configuration's
// model gives, against values worked out by hand and the example files.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { formatCount, formatNs, formatValue, modelPath, unitSymbol, unitsOf } from './readout.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');

test('values carry four significant digits and their unit', () => {
  assert.equal(formatValue(25, 'm/s'), '25 m/s');
  assert.equal(formatValue(24.98765, 'm/s'), '24.99 m/s');
  assert.equal(formatValue(392.39999, 'V'), '392.4 V');
  assert.equal(formatValue(-0.0123456, 'N'), '-0.01235 N');
  assert.equal(formatValue(1234.5, ''), '1,235');
  assert.equal(formatValue(2.5e-7, 'A'), '2.500e-7 A');
  assert.equal(formatValue(0.5, '1'), '0.5');
  assert.equal(formatValue(31.5, 'degC'), '31.5 °C');
  assert.equal(formatValue(NaN, 'V'), 'NaN');
  assert.equal(unitSymbol('N m'), 'N·m');
});

test('counts have thousands separators, durations a unit that fits', () => {
  assert.equal(formatCount(1234567), '1,234,567');
  assert.equal(formatCount(undefined), '–');
  assert.equal(formatNs(850), '850 ns');
  assert.equal(formatNs(23000), '23 µs');
  assert.equal(formatNs(123456), '123.5 µs');
  assert.equal(formatNs(2.5e6), '2.5 ms');
  assert.equal(formatNs(3.21e9), '3.21 s');
});

test('the model a configuration names resolves beside it, built-in models to none', () => {
  const cruise = readFileSync(join(root, 'config/examples/cruise.toml'), 'utf8');
  assert.equal(modelPath('config/examples/cruise.toml', cruise), 'models/examples/cruise_control.json');
  assert.equal(modelPath('config/examples/ev.toml', readFileSync(join(root, 'config/examples/ev.toml'), 'utf8')), null);
  assert.equal(modelPath('a.toml', 'model = "../m.json"'), null, 'out of the folder');
  assert.equal(modelPath('a.toml', '[x]\nmodel = "m.json"'), null, 'a key of another table');
  const doc = JSON.parse(readFileSync(join(root, 'models/examples/cruise_control.json'), 'utf8'));
  assert.deepEqual(unitsOf(doc), { pedal: '1', v: 'm/s', v_ref: 'm/s', force: 'N' });
});
