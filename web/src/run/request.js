// What Run sends the server: the model as it is run (its inputs given
// values, its probes added) and the solver options typed, or why not.
import { prepared } from '../offline.js';
import { serialize } from '../format.js';
import { outputUnits } from '../plot.js';

/**
 * The request for an offline run of `model` with `options` (as typed),
 * `inputs` and `probes`: `{doc, body}`, the document run and the body to
 * post, or `{error}`, what is wrong in words.
 */
export function request(model, options, inputs, probes) {
  let doc;
  try {
    doc = prepared(model.doc, inputs, probes);
  } catch (e) {
    return { error: e.message };
  }
  // A model with no outputs would run and plot nothing: said instead.
  if (Object.keys(outputUnits(doc)).length === 0) {
    const empty = (model.doc.blocks ?? []).length === 0;
    return {
      error: empty
        ? 'The model is empty: add blocks from the palette in the editor, and an Output for each signal to plot.'
        : 'The model has nothing to plot: add an Output block (in the Routing group) for each signal to record and plot, or probe a signal.',
    };
  }
  const body = { model: serialize(doc, model.style), solver: options.solver };
  const keys = options.solver === 'bdf' ? ['step', 'stop', 'rtol', 'atol'] : ['step', 'stop'];
  for (const k of keys) {
    const text = options[k].trim();
    if (text === '') continue;
    if (!Number.isFinite(Number(text))) return { error: `${k}: “${text}” is not a number; give one such as 0.001 or 1e-6` };
    body[k] = Number(text);
  }
  return { doc, body };
}
