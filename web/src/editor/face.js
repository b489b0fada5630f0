// What a block's face shows besides its id and type, as Simulink and
// PathView draw it: its key parameter (a Gain's K, a Constant's value, a
// Saturation's limits …), and the sign or operator of each input of a Sum
// or Product instead of its number.

/** A parameter's value in a few characters (numbers as written in the file). */
export function short(v, room = 22) {
  let text;
  if (Array.isArray(v)) text = `[${v.slice(0, 3).map((x) => short(x, room)).join(', ')}${v.length > 3 ? ', …' : ''}]`;
  else if (v !== null && typeof v === 'object' && !v.isLosslessNumber) text = '{…}';
  else if (typeof v === 'number' || v?.isLosslessNumber) {
    // A number as written, or to four significant digits when that is longer.
    text = String(v);
    if (text.length > 7 && Number.isFinite(Number(text))) text = String(Number(Number(text).toPrecision(4)));
  } else text = String(v);
  return text.length > room ? `${text.slice(0, room - 1)}…` : text;
}

const given = (...values) => values.every((v) => v !== undefined && v !== null && v !== '');

/** Per block type, the face's text from its params (nothing when a parameter it needs is not set). */
const FACES = {
  Gain: (p) => given(p.gain) && `K = ${short(p.gain)}`,
  Sum: (p) => given(p.signs) && String(p.signs),
  Product: (p) => given(p.ops) && String(p.ops),
  Divide: (p) => given(p.ops) && String(p.ops),
  Constant: (p) => given(p.value) && short(p.value),
  Saturation: (p) => given(p.lower, p.upper) && `[${short(p.lower)}, ${short(p.upper)}]`,
  Integrator: (p) => given(p.initial) && `x₀ = ${short(p.initial)}`,
  DiscreteIntegrator: (p) => given(p.initial) && `x₀ = ${short(p.initial)}`,
  UnitDelay: (p) => given(p.initial) && `x₀ = ${short(p.initial)}`,
  Memory: (p) => given(p.initial) && `x₀ = ${short(p.initial)}`,
  PID: (p) => [['P', p.kp], ['I', p.ki], ['D', p.kd]].filter(([, v]) => given(v)).map(([k, v]) => `${k} ${short(v, 8)}`).join('  '),
  DiscretePID: (p) => FACES.PID(p),
  TransferFunction: (p) => given(p.numerator, p.denominator) && `${short(p.numerator, 12)} / ${short(p.denominator, 12)}`,
  DiscreteTransferFunction: (p) => FACES.TransferFunction(p),
  Sine: (p) => given(p.amplitude) && `${short(p.amplitude, 8)}·sin(${given(p.frequency) ? short(p.frequency, 8) : 1}·t)`,
  Step: (p) => given(p.time) && `${given(p.before) ? short(p.before, 8) : 0} → ${given(p.after) ? short(p.after, 8) : 1} at ${short(p.time, 8)}`,
  Ramp: (p) => given(p.slope) && `slope ${short(p.slope)}`,
  MathFunction: (p) => given(p.function) && String(p.function),
  MinMax: (p) => given(p.function) && String(p.function),
  Expression: (p) => given(p.expression) && short(p.expression),
  RelationalOperator: (p) => given(p.operator) && String(p.operator),
  LogicalOperator: (p) => given(p.operator) && String(p.operator),
  CompareToConstant: (p) => given(p.constant) && `${given(p.operator) ? p.operator : ''} ${short(p.constant)}`.trim(),
  Output: (p) => given(p.unit) && `[${p.unit}]`,
  Outport: (p) => given(p.unit) && `[${p.unit}]`,
  Inport: (p) => given(p.unit) && `[${p.unit}]`,
};

/** The text on `block`'s face under its type, or '' when it has none. */
export function faceOf(block) {
  const face = FACES[block.type];
  return (face && face(block.params ?? {})) || '';
}

const SIGN = { '+': '+', '-': '−', '*': '×', '/': '÷' };

/**
 * The label drawn beside input `name`, the `index`-th of `block`: a Sum's
 * sign or a Product's operator for that input, else the port's name.
 */
export function inputLabel(block, name, index) {
  const ops = block.type === 'Sum' ? block.params?.signs : ['Product', 'Divide'].includes(block.type) ? block.params?.ops : undefined;
  const op = typeof ops === 'string' && ops.length > 1 ? SIGN[ops[index]] : undefined;
  return op ?? name;
}
