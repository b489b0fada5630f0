// An input the check finds unlinked in the diagram shown: the fix offered
// as actions, a link from one of the outputs here or a Constant fed in.
import { addLink, endOf } from '../model.js';

/**
 * The fix of the unlinked input `check` names in `diagram` (whose blocks'
 * ids start with `prefix` in the check's words), or null: the input
 * (`into`), the outputs that could feed it (`sources`), `linkInto(from)`
 * and `feedConstant()`, each an edit (`update`, `add` of useAddBlock.js).
 */
export function fixOf({ check, prefix, diagram, ports, nodes, update, add }) {
  const named = check?.kind === 'Unconnected' && check.port && check.block?.startsWith(prefix) && !check.block.slice(prefix.length).includes('/');
  if (!named) return null;
  const unlinked = { id: check.block.slice(prefix.length), port: check.port };
  const into = endOf(unlinked.id, unlinked.port, ports[unlinked.id]?.inputs);
  const sources = (diagram.blocks || [])
    .filter((b) => b.id !== unlinked.id)
    .flatMap((b) => (ports[b.id]?.outputs || []).map((o) => endOf(b.id, o, ports[b.id].outputs)));
  const linkInto = (from) => update((d) => addLink(d, from, into));
  const feedConstant = async () => {
    const target = nodes.find((n) => n.id === unlinked.id);
    const at = target ? { x: target.position.x - 120, y: target.position.y + (target.measured?.height ?? 56) / 2 } : { x: 0, y: 0 };
    await add('Constant', at, true, (d, block) => addLink(d, block.id, into));
  };
  return { into, sources, linkInto, feedConstant };
}
