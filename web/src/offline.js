// What an offline run sends besides the model being edited, for that run
// only (the model file is not changed): a value for each of its inputs (a
// top-level Inport becomes a Constant of the value, or a Step to it at a
// time, instead of taking its default) and probes (an Output linked from
// an internal signal, as Simulink's signal logging records one).
import { addLink, copy, num } from './model.js';

/** The model's inputs that can be given a value: its scalar top-level Inports, with their default and unit. */
export function inputsOf(doc) {
  return (doc?.blocks ?? [])
    .filter((b) => b.type === 'Inport' && num(b.params?.width ?? 1) === 1)
    .map((b) => ({ id: b.id, default: num(b.params?.default ?? 0), unit: String(b.params?.unit ?? '') }));
}

/** The Output a probe of `from` (`block` or `block.port`) is recorded by: an id no block has. */
export function probeId(doc, from) {
  const taken = new Set((doc?.blocks ?? []).map((b) => b.id));
  const base = `probe_${from.replace(/[^A-Za-z0-9_]/g, '_')}`;
  let id = base;
  for (let n = 2; taken.has(id); n++) id = `${base}_${n}`;
  return id;
}

const number = (text) => (text.trim() !== '' && Number.isFinite(Number(text)) ? Number(text) : null);

/**
 * A copy of `doc` as it is run: each input given in `inputs` (by id:
 * `{value, at}` as typed; empty: its default) replaced, each of `probes`
 * recorded. Throws an Error saying what is wrong in words.
 */
export function prepared(doc, inputs = {}, probes = []) {
  const run = copy(doc);
  for (const input of inputsOf(doc)) {
    const given = inputs[input.id];
    if (!given || (given.value.trim() === '' && given.at.trim() === '')) continue;
    const value = number(given.value);
    if (value === null) throw new Error(`input ${input.id}: “${given.value}” is not a number; give a value such as 0.5`);
    const block = run.blocks.find((b) => b.id === input.id);
    const { layout } = block;
    for (const key of Object.keys(block)) delete block[key];
    if (given.at.trim() === '') Object.assign(block, { id: input.id, type: 'Constant', params: { value } });
    else {
      const at = number(given.at);
      if (at === null || at < 0) throw new Error(`input ${input.id}: the time “${given.at}” is not a number ≥ 0; give one in s, or leave it empty`);
      Object.assign(block, { id: input.id, type: 'Step', params: { time: at, before: input.default, after: value } });
    }
    if (layout) block.layout = layout;
  }
  for (const from of probes) {
    const source = from.split('.')[0];
    if (!run.blocks.some((b) => b.id === source)) throw new Error(`probe ${from}: the model has no block ${source} at its top level`);
    const id = probeId(run, from);
    run.blocks.push({ id, type: 'Output' });
    addLink(run, from, id);
  }
  return run;
}
