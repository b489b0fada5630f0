// Formatting of the dashboard's values against values worked out by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatCount, formatNs, formatValue, unitSymbol } from './readout.js';

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

