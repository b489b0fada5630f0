// Links bent through waypoints: a double-click on a link adds one where
// it lengthens the link least; a waypoint is dragged to move it (or a
// link's middle handle to add one), and removed by a double-click.
import { useMemo, useRef, useState } from 'react';
import { num, setWaypoints } from '../model.js';

/** The points of a link's layout as numbers. */
export const pointsOf = (link) => (link.layout?.waypoints || []).map((p) => ({ x: num(p.x), y: num(p.y) }));

const distance = (a, b) => Math.hypot(a.x - b.x, a.y - b.y);

/** The index in `points` (between `from` and `to`) where `point` adds the least length. */
function cheapest(from, points, to, point) {
  const chain = [from, ...points, to];
  let best = 0;
  let cost = Infinity;
  for (let i = 0; i + 1 < chain.length; i++) {
    const c = distance(chain[i], point) + distance(point, chain[i + 1]) - distance(chain[i], chain[i + 1]);
    if (c < cost) [best, cost] = [i, c];
  }
  return best;
}

/**
 * `waypoints`, what LinkEdge.jsx reads from WaypointContext (the point
 * dragged, and `startDrag`), and `onEdgeDoubleClick`, React Flow's.
 */
export function useWaypoints({ flow, nodes, update }) {
  const [dragged, setDragged] = useState(null);
  const lastTap = useRef(null);
  // A block's centre on the canvas.
  const centreOf = (id) => {
    const n = nodes.find((x) => x.id === id);
    return n ? { x: n.position.x + (n.measured?.width || 0) / 2, y: n.position.y + (n.measured?.height || 0) / 2 } : { x: 0, y: 0 };
  };
  const onEdgeDoubleClick = (e, edge) => {
    const p = flow.screenToFlowPosition({ x: e.clientX, y: e.clientY });
    const point = { x: Math.round(p.x), y: Math.round(p.y) };
    update((d) => {
      const link = d.links[edge.data.link];
      const points = pointsOf(link);
      points.splice(cheapest(centreOf(edge.source), points, centreOf(edge.target), point), 0, point);
      setWaypoints(link, points);
    });
  };
  // `change(points)` on the waypoints of link number `link`.
  const edit = (link, change) =>
    update((d) => {
      const points = pointsOf(d.links[link]);
      change(points);
      setWaypoints(d.links[link], points);
    });
  const waypoints = useMemo(
    () => ({
      dragged,
      startDrag: (e, link, index, insert) => {
        if (e.button !== 0) return;
        e.stopPropagation();
        e.preventDefault();
        let last = null;
        const move = (ev) => {
          // A click is no move, even with the pointer shaking by a pixel or two.
          if (!last && Math.hypot(ev.clientX - e.clientX, ev.clientY - e.clientY) < 4) return;
          const p = flow.screenToFlowPosition({ x: ev.clientX, y: ev.clientY });
          last = { x: Math.round(p.x), y: Math.round(p.y) };
          setDragged({ link, index, insert, point: last });
        };
        const up = () => {
          window.removeEventListener('pointermove', move);
          window.removeEventListener('pointerup', up);
          setDragged(null);
          if (last) return edit(link, (points) => (insert ? points.splice(index, 0, last) : (points[index] = last)));
          // Two clicks on a waypoint in quick succession remove it.
          const tap = { link, index, time: performance.now() };
          const before = lastTap.current;
          lastTap.current = tap;
          if (!insert && before && before.link === link && before.index === index && tap.time - before.time < 500) {
            lastTap.current = null;
            edit(link, (points) => points.splice(index, 1));
          }
        };
        window.addEventListener('pointermove', move);
        window.addEventListener('pointerup', up);
      },
    }),
    [dragged, flow, update],
  );
  return { waypoints, onEdgeDoubleClick };
}
