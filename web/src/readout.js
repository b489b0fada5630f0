// Values as the dashboard shows them: numbers to four significant digits
// with their unit's symbol, a signal's values to a fixed number of them
// with what is noise beside the signal's size shown as 0, counts with
// thousands separators, durations in ns, µs, ms or s.

const SYMBOLS = { degC: '°C', degF: '°F', deg: '°', 'deg/s': '°/s', 'N m': 'N·m', '1': '' };
const DIGITS = new Intl.NumberFormat('en-US', { maximumSignificantDigits: 4 });
const COUNT = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** The symbol shown for a model's unit (`degC` as °C; `1`, dimensionless, as nothing). */
export function unitSymbol(unit) {
  return SYMBOLS[unit] ?? unit ?? '';
}

/** `value` to four significant digits, with the symbol of `unit` after it. */
export function formatValue(value, unit = '') {
  if (value === undefined || value === null) return '–';
  if (!Number.isFinite(value)) return String(value);
  const number = Math.abs(value) >= 1e7 || (value !== 0 && Math.abs(value) < 1e-4) ? value.toExponential(3) : DIGITS.format(value);
  const symbol = unitSymbol(unit);
  return symbol ? `${number} ${symbol}` : number;
}

/** Below this fraction of a signal's size (its largest magnitude so far), a value is numerical noise. */
const NOISE = 1e-9;
/** A signal's size is taken as at least this (in its unit), so a signal that is all noise reads 0. */
const SMALLEST_SIZE = 1e-6;

/**
 * A signal's `value` with exactly `digits` significant digits (no grouping,
 * so the text reads back as a number), 0 when it is below 1e-9 of `size`
 * (the signal's largest magnitude so far); the symbol of `unit` after it.
 */
export function formatSignal(value, size = 0, unit = '', digits = 4) {
  if (value === undefined || value === null) return '–';
  if (!Number.isFinite(value)) return String(value);
  const a = Math.abs(value);
  const zero = a < NOISE * Math.max(size, a, SMALLEST_SIZE);
  const number = zero
    ? '0'
    : a >= 1e7 || a < 1e-4
      ? value.toExponential(digits - 1)
      : value.toLocaleString('en-US', { minimumSignificantDigits: digits, maximumSignificantDigits: digits, useGrouping: false });
  const symbol = unitSymbol(unit);
  return symbol ? `${number} ${symbol}` : number;
}

/** A count: an integer with thousands separators. */
export function formatCount(n) {
  return typeof n === 'number' && Number.isFinite(n) ? COUNT.format(n) : '–';
}

/** A duration given in ns, in ns, µs, ms or s (four significant digits). */
export function formatNs(ns) {
  if (typeof ns !== 'number' || !Number.isFinite(ns)) return '–';
  const a = Math.abs(ns);
  if (a < 1e3) return `${DIGITS.format(ns)} ns`;
  if (a < 1e6) return `${DIGITS.format(ns / 1e3)} µs`;
  if (a < 1e9) return `${DIGITS.format(ns / 1e6)} ms`;
  return `${DIGITS.format(ns / 1e9)} s`;
}
