// Values as the dashboard shows them: numbers to four significant digits
// with their unit's symbol, counts with thousands separators, durations in
// ns, µs, ms or s; and the units of a run's signals, read from the model
// its configuration names.

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

/**
 * The model file a run configuration names, as a path in the served
 * folder (the configuration's `model` is relative to the configuration's
 * own folder), or null for a built-in model or one that leads out.
 */
export function modelPath(configPath, configText) {
  const head = configText.split(/^\s*\[/m)[0];
  const found = head.match(/^\s*model\s*=\s*"([^"]+)"/m);
  if (!found || !found[1].endsWith('.json')) return null;
  const parts = configPath.split('/').slice(0, -1);
  for (const part of found[1].split('/')) {
    if (part === '..') {
      if (parts.length === 0) return null;
      parts.pop();
    } else if (part !== '.' && part !== '') parts.push(part);
  }
  return parts.join('/');
}

/** The units of a model document's inputs and outputs by name (blocks Inport, Output and Outport with a `unit`). */
export function unitsOf(doc) {
  const units = {};
  for (const b of doc?.blocks || []) {
    if (['Inport', 'Output', 'Outport'].includes(b.type) && typeof b.params?.unit === 'string') units[b.id] = b.params.unit;
  }
  return units;
}
