// A link on the canvas: an arrow from an output to an input, straight
// through its waypoints when it has some, around the blocks when it runs
// back (a feedback) and has none; selected, it shows a handle on
// each waypoint (drag to move, double-click to remove) and one in the
// middle of each stretch (drag to bend the link there).
import { createContext, memo, useContext } from 'react';
import { BaseEdge, EdgeLabelRenderer, Position, getSmoothStepPath, useStore } from '@xyflow/react';
import { feedbackRoute } from './geometry.js';

/** What the links ask of the editor: `startDrag(event, link, index, insert)` (a waypoint moved, or added when `insert`; two clicks remove one), `dragged` (link, index, point). */
export const WaypointContext = createContext(null);

/** The blocks' boxes on the canvas. */
const boxesOf = (state) =>
  Array.from(state.nodeLookup.values(), (n) => ({
    x: n.internals.positionAbsolute.x,
    y: n.internals.positionAbsolute.y,
    width: n.measured?.width ?? 0,
    height: n.measured?.height ?? 0,
  }));

const sameRoute = (a, b) => a === b || (a !== null && b !== null && a.every((p, i) => p.x === b[i].x && p.y === b[i].y));

// Events on the handles reach the link through React's tree (a double-click would bend it there): stop them.
const stop = (e) => e.stopPropagation();

function LinkEdgeView({ id, sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition, markerEnd, selected, data }) {
  const ctx = useContext(WaypointContext);
  let points = data.waypoints || [];
  const drag = ctx?.dragged;
  if (drag && drag.link === data.link) {
    points = points.slice();
    if (drag.insert) points.splice(drag.index, 0, drag.point);
    else points[drag.index] = drag.point;
  }
  // A link without waypoints from an output on the right back to an input on the left: around the blocks.
  const back = points.length === 0 && sourcePosition === Position.Right && targetPosition === Position.Left;
  const route = useStore(
    (state) => (back ? feedbackRoute(boxesOf(state), { x: sourceX, y: sourceY }, { x: targetX, y: targetY }) : null),
    sameRoute,
  );
  let path;
  if (route) {
    path = route.map((p, i) => `${i ? 'L' : 'M'} ${p.x} ${p.y}`).join(' ');
  } else if (points.length) {
    const all = [{ x: sourceX, y: sourceY }, ...points, { x: targetX, y: targetY }];
    path = all.map((p, i) => `${i ? 'L' : 'M'} ${p.x} ${p.y}`).join(' ');
  } else {
    [path] = getSmoothStepPath({ sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition, borderRadius: 6 });
  }
  const chain = [{ x: sourceX, y: sourceY }, ...points, { x: targetX, y: targetY }];
  return (
    <>
      <BaseEdge id={id} path={path} markerEnd={markerEnd} interactionWidth={14} className={selected ? 'link link-selected' : 'link'} />
      {selected && ctx && (
        <EdgeLabelRenderer>
          {points.map((p, i) => (
            <div
              key={`w${i}`}
              className="waypoint nodrag nopan"
              style={{ transform: `translate(-50%, -50%) translate(${p.x}px, ${p.y}px)` }}
              data-testid={`waypoint-${data.link}-${i}`}
              title="Drag to move, double-click to remove"
              onPointerDown={(e) => ctx.startDrag(e, data.link, i, false)}
              onDoubleClick={stop}
            />
          ))}
          {chain.slice(1).map((p, i) => (
            <div
              key={`m${i}`}
              className="waypoint-new nodrag nopan"
              style={{ transform: `translate(-50%, -50%) translate(${(p.x + chain[i].x) / 2}px, ${(p.y + chain[i].y) / 2}px)` }}
              data-testid={`bend-${data.link}-${i}`}
              title="Drag to bend the link"
              onPointerDown={(e) => ctx.startDrag(e, data.link, i, true)}
              onDoubleClick={stop}
            />
          ))}
        </EdgeLabelRenderer>
      )}
    </>
  );
}

/** The link edge type. */
export const LinkEdge = memo(LinkEdgeView);
