// What is selected on the canvas: blocks (React Flow's nodes) and links
// (its edges), and selecting all, none or one block.
import { useCallback } from 'react';

/** The selection among `nodes` and `edges` (useElements.js), the blocks of `diagram`. */
export function useSelection({ nodes, setNodes, edges, diagram }) {
  const ids = nodes.filter((n) => n.selected).map((n) => n.id);
  const blocks = (diagram.blocks || []).filter((b) => ids.includes(b.id));
  const links = edges.filter((e) => e.selected);
  const all = useCallback(() => setNodes((ns) => ns.map((n) => ({ ...n, selected: true }))), [setNodes]);
  const none = useCallback(() => setNodes((ns) => ns.map((n) => (n.selected ? { ...n, selected: false } : n))), [setNodes]);
  const only = useCallback((id) => setNodes((ns) => ns.map((n) => ({ ...n, selected: n.id === id }))), [setNodes]);
  return { ids, blocks, links, all, none, only };
}
