// The Run view's solver options, as typed: they follow the model's own
// settings (another model opened, or its settings edited in the editor).
import { useEffect, useState } from 'react';

/** The solver options a model's `simulation` section gives (as typed text). */
export function optionsOf(sim = {}) {
  return {
    solver: String(sim.solver ?? 'rk4'),
    step: String(sim.step ?? '0.001'),
    stop: String(sim.stop ?? '10'),
    rtol: String(sim.rtol ?? '1e-6'),
    atol: String(sim.atol ?? '1e-8'),
  };
}

/** `[options, set]`: `set(key)(text)` types one option. */
export function useOptions(model) {
  const [options, setOptions] = useState(() => optionsOf(model.doc.simulation));
  const settings = JSON.stringify(model.doc.simulation ?? null);
  useEffect(() => setOptions(optionsOf(model.doc.simulation)), [model.generation, settings]);
  const set = (k) => (v) => setOptions((o) => ({ ...o, [k]: v }));
  return [options, set];
}
