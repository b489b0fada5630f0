// What the canvas shows: the whole diagram once it is drawn (after
// another model opened, a subsystem entered, a layout), or one block named
// by another view, at a readable zoom.
import { useEffect, useRef } from 'react';

/**
 * Fitting keeps the zoom at 1, where the smallest text on a block (its
 * type and port names, 11 px) is 11 px on screen: a diagram larger than
 * the canvas is shown from its left and top edges, where its signals
 * start, and scrolled, instead of shrunk to unreadable text.
 */
export const FIT_PADDING = 0.1;

/**
 * `fitNext()` shows the whole diagram once its blocks are measured (an
 * empty one at scale 1), and `fitReadable(duration)` fits now; the block
 * `focus` names is brought into view once it is drawn; only while
 * `active`.
 */
export function useViewport({ flow, nodes, active, canvasRef, generation, focus }) {
  const toFit = useRef(true);
  const toShow = useRef(null);
  useEffect(() => {
    toFit.current = true;
  }, [generation]);
  // A block another view names (`focus`, a new object each time).
  useEffect(() => {
    if (focus?.block) toShow.current = focus.block.split('/').pop();
  }, [focus]);

  /** The diagram at zoom 1: centred where it fits the canvas, else from its left or top edge. */
  function fitReadable(duration = 0) {
    const pane = canvasRef.current?.querySelector('.react-flow');
    if (!pane || nodes.length === 0) return;
    const bounds = flow.getNodesBounds(nodes);
    const place = (size, start, length) =>
      length <= size * (1 - FIT_PADDING) ? (size - length) / 2 - start : (size * FIT_PADDING) / 2 - start;
    flow.setViewport({ x: place(pane.clientWidth, bounds.x, bounds.width), y: place(pane.clientHeight, bounds.y, bounds.height), zoom: 1 }, { duration });
  }

  useEffect(() => {
    const shown = toShow.current && nodes.find((n) => n.id === toShow.current);
    if (active && shown?.measured?.width) {
      toShow.current = null;
      toFit.current = false;
      flow.fitView({ nodes: [{ id: shown.id }], maxZoom: 1, minZoom: 1, duration: 200 });
      return;
    }
    if (!toFit.current || !active) return;
    if (nodes.length === 0) {
      toFit.current = false;
      flow.setViewport({ x: 0, y: 0, zoom: 1 });
    } else if (nodes.every((n) => n.data.ports && n.measured?.width)) {
      toFit.current = false;
      fitReadable();
    }
  }, [nodes, active, flow]);

  const fitNext = () => {
    toFit.current = true;
  };
  return { fitNext, fitReadable };
}
