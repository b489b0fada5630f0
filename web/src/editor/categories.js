// The palette's groups: each block type's category, its colour (a Radix
// scale) and the glyph drawn on its card.

/** Categories in palette order: name, Radix colour scale, glyph, types. */
export const CATEGORIES = [
  { name: 'Sources', color: 'green', glyph: '▶', types: ['Constant', 'Step', 'Ramp', 'Sine', 'Pulse', 'Clock', 'FromTable'] },
  { name: 'Math', color: 'blue', glyph: 'Σ', types: ['Gain', 'Sum', 'Product', 'Divide', 'Abs', 'Sign', 'MinMax', 'MathFunction', 'Expression'] },
  { name: 'Nonlinear', color: 'orange', glyph: '⌇', types: ['Saturation', 'DeadZone'] },
  { name: 'Continuous', color: 'cyan', glyph: '∫', types: ['Integrator', 'Derivative', 'TransferFunction', 'StateSpace', 'PID'] },
  {
    name: 'Discrete',
    color: 'teal',
    glyph: 'z⁻¹',
    types: ['UnitDelay', 'Memory', 'ZeroOrderHold', 'DiscreteIntegrator', 'DiscreteTransferFunction', 'DiscretePID', 'Counter'],
  },
  {
    name: 'Logic',
    color: 'amber',
    glyph: '&',
    types: ['RelationalOperator', 'LogicalOperator', 'CompareToConstant', 'Edge', 'HitCrossing', 'If'],
  },
  { name: 'Lookup tables', color: 'pink', glyph: '⊞', types: ['Lookup1D', 'Lookup2D'] },
  {
    name: 'Routing',
    color: 'gray',
    glyph: '⇄',
    types: ['Inport', 'Output', 'Outport', 'Identity', 'Terminator', 'Mux', 'Demux', 'Merge', 'Switch'],
  },
  { name: 'Subsystems', color: 'violet', glyph: '▣', types: ['Subsystem'] },
];

const OTHER = { name: 'Other', color: 'gray', glyph: '□', types: [] };

/** The category of block type `type` (Other for a type the list does not know). */
export function categoryOf(type) {
  return CATEGORIES.find((c) => c.types.includes(type)) || OTHER;
}

/** The library entries matching every word of `query` in their type, summary, parameter names or descriptions, by category. */
export function searchLibrary(library, query) {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const text = (b) =>
    [b.type, b.summary, ...Object.entries(b.params || {}).flatMap(([k, p]) => [k, p?.description || ''])].join(' ').toLowerCase();
  const found = library.filter((b) => words.every((w) => text(b).includes(w)));
  return [...CATEGORIES, OTHER]
    .map((c) => ({ ...c, blocks: found.filter((b) => categoryOf(b.type) === c) }))
    .filter((c) => c.blocks.length);
}
