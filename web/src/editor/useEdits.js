// The editor's edits of the diagram shown: links made and refused, blocks
// and links removed, moved, renamed, turned, mirrored, aligned and laid
// out.
import { addLink, align, endOf, layOut, removeBlock, removeLink, renameBlock, turn } from '../model.js';

/** The edits, each one step of `update` (useHistory.js). */
export function useEdits({ flow, diagram, nodes, edges, ports, selection, update, positionOf, sizeOf, selectNext, fitNext, setRefused }) {
  const ids = selection.ids;
  // A link into an input that already has one is refused at the drop, with the link there named.
  const onConnect = ({ source, sourceHandle, target, targetHandle }) => {
    const out = sourceHandle.slice(4);
    const inp = targetHandle.slice(3);
    const there = edges.find((e) => e.target === target && e.targetHandle === targetHandle);
    if (there) return setRefused(`Not linked: ${target}'s input ${inp} already comes from ${there.data.from}; remove that link first`);
    setRefused('');
    update((d) => addLink(d, endOf(source, out, ports[source]?.outputs), endOf(target, inp, ports[target]?.inputs)));
  };
  const removeSelection = () => flow.deleteElements({ nodes: nodes.filter((n) => n.selected), edges: selection.links });
  const onDelete = ({ nodes: goneNodes, edges: goneEdges }) => {
    const gone = new Set(goneNodes.map((n) => n.id));
    if (!gone.size && !goneEdges.length) return;
    update((d) => {
      gone.forEach((id) => removeBlock(d, id));
      goneEdges.filter((e) => !gone.has(e.source) && !gone.has(e.target)).forEach((e) => removeLink(d, e.data.from, e.data.to));
    });
  };
  const onNodeDragStop = (_, __, moved) =>
    update((d) => {
      for (const node of moved) {
        const b = d.blocks.find((x) => x.id === node.id);
        if (b) b.layout = { ...(b.layout || {}), x: Math.round(node.position.x), y: Math.round(node.position.y) };
      }
    });
  const rename = (from, to) => {
    if (to === from) return;
    if (!to || /[./]/.test(to)) throw new Error('an id is not empty and has no . or /');
    if ((diagram.blocks || []).some((b) => b.id === to)) throw new Error(`${to} is taken`);
    selectNext([to]);
    update((d) => renameBlock(d, from, to));
  };
  const turnSelection = (how) =>
    ids.length && update((d) => d.blocks.filter((b) => ids.includes(b.id)).forEach((b) => turn(b, how, positionOf(b))));
  const alignSelection = (how) => update((d) => align(d, ids, how, (b) => ({ ...positionOf(b), ...sizeOf(b) })));
  const layOutAll = () => {
    if (!(diagram.blocks || []).length) return;
    fitNext();
    update((d) => layOut(d, sizeOf));
  };
  return { onConnect, removeSelection, onDelete, onNodeDragStop, rename, turnSelection, alignSelection, layOutAll };
}
