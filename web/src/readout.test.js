// Formatting of the dashboard's values against values worked out by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatCount, formatNs, formatSignal, formatValue, unitSymbol } from './readout.js';

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


test("a signal's values: a fixed number of digits, and noise beside its size as 0", () => {
  assert.equal(formatSignal(25, 25, 'm/s'), '25.00 m/s');
  assert.equal(formatSignal(2500.4, 2600, 'rpm'), '2500 rpm');
  assert.equal(formatSignal(12345.6, 20000, 'N'), '12350 N');
  assert.equal(formatSignal(0.5, 1, '1'), '0.5000');
  assert.equal(formatSignal(-0.0123456, 1), '-0.01235');
  assert.equal(formatSignal(2.5e-7, 1e-6, 'A'), '2.500e-7 A');
  assert.equal(formatSignal(1.23456789, 2, '', 6), '1.23457');
  // Noise a run shows: a speed of -2.008e-61 m/s beside 30 m/s, a torque
  // of 1e-75 N·m that never was more, a rounding error beside 400 V.
  assert.equal(formatSignal(-2.008e-61, 30, 'm/s'), '0 m/s');
  assert.equal(formatSignal(1.132e-75, 1.132e-75, 'N m'), '0 N·m');
  assert.equal(formatSignal(3e-8, 400, 'V'), '0 V');
  assert.equal(formatSignal(3e-6, 400, 'V'), '3.000e-6 V');
  assert.equal(formatSignal(0, 0, 'V'), '0 V');
  assert.equal(formatSignal(undefined, 1), '–');
  assert.equal(formatSignal(Infinity, 1), 'Infinity');
});
