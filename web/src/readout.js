// Values as the dashboard shows them: numbers to four significant digits
// with their unit's symbol, counts with thousands separators, durations in
// ns, µs, ms or s.

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
