// The diagram shown as React Flow's nodes and edges, built again from the
// document, its ports and the check, keeping what React Flow holds of
// them: each node's measured size and what is selected.
import { useEffect, useMemo, useRef, useState } from 'react';
import { MarkerType } from '@xyflow/react';
import { portName, splitEnd, targets } from '../model.js';
import { pointsOf } from './useWaypoints.js';

const ARROW = { type: MarkerType.ArrowClosed, width: 14, height: 14, color: 'var(--gray-10)' };
const ARROW_SELECTED = { ...ARROW, color: 'var(--accent-9)' };

/** The edges of `diagram`'s links, one per target, between the handles of their ports. */
function edgesOf(diagram, ports) {
  return (diagram.links || []).flatMap((l, index) => {
    const [src, sp] = splitEnd(l.from);
    return targets(l).map((t) => {
      const [dst, dp] = splitEnd(t);
      return {
        id: `${l.from}->${t}`,
        type: 'link',
        source: src,
        target: dst,
        sourceHandle: `out:${portName(ports[src]?.outputs, sp)}`,
        targetHandle: `in:${portName(ports[dst]?.inputs, dp)}`,
        data: { from: l.from, to: t, link: index, waypoints: pointsOf(l) },
      };
    });
  });
}

/**
 * The nodes and edges of `diagram` (whose blocks' ids start with `prefix`
 * in the check's words); `selectNext(ids)` selects those blocks once the
 * nodes are built again (after a paste, an add, a rename), and another
 * model opened (`generation`) starts with nothing selected.
 */
export function useElements({ diagram, ports, check, prefix, positionOf, generation }) {
  const [nodes, setNodes] = useState([]);
  const [edges, setEdges] = useState([]);
  const toSelect = useRef(null);
  const selectNext = (ids) => {
    toSelect.current = new Set(ids);
  };
  useEffect(() => {
    toSelect.current = new Set();
  }, [generation]);

  useEffect(() => {
    // Nodes keep what React Flow measured of them (a node without its
    // measured size stays hidden) and whether they are selected.
    const chosen = toSelect.current;
    toSelect.current = null;
    setNodes((previous) => {
      const before = new Map(previous.map((n) => [n.id, n]));
      return (diagram.blocks || []).map((b) => ({
        id: b.id,
        type: 'block',
        measured: before.get(b.id)?.measured,
        position: positionOf(b),
        selected: chosen ? chosen.has(b.id) : before.get(b.id)?.selected === true,
        data: {
          block: b,
          ports: ports[b.id],
          error: check && check.block === prefix + b.id ? check : null,
        },
      }));
    });
  }, [diagram, ports, check, positionOf, prefix]);

  const built = useMemo(() => edgesOf(diagram, ports), [diagram, ports]);
  useEffect(
    () =>
      setEdges((previous) => {
        const selected = new Set(previous.filter((e) => e.selected).map((e) => e.id));
        return built.map((e) => ({ ...e, selected: selected.has(e.id) }));
      }),
    [built],
  );
  const shownEdges = useMemo(() => edges.map((e) => ({ ...e, markerEnd: e.selected ? ARROW_SELECTED : ARROW })), [edges]);
  return { nodes, setNodes, edges, setEdges, shownEdges, selectNext };
}
