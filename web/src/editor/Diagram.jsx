// The canvas itself: React Flow with the blocks (BlockNode.jsx) and links
// (LinkEdge.jsx, their waypoints dragged through WaypointContext), a dot
// grid, zoom controls and a minimap, in the theme's light or dark.
import { useThemeContext } from '@radix-ui/themes';
import { Background, BackgroundVariant, Controls, MiniMap, ReactFlow, applyEdgeChanges, applyNodeChanges } from '@xyflow/react';
import { BlockNode } from './BlockNode.jsx';
import { LinkEdge, WaypointContext } from './LinkEdge.jsx';
import { categoryOf } from './categories.js';
import { FIT_PADDING } from './useViewport.js';

const NODE_TYPES = { block: BlockNode };
const EDGE_TYPES = { link: LinkEdge };

/**
 * `elements` (useElements.js) drawn; `on` holds React Flow's handlers:
 * onNodeDragStop, onNodeDoubleClick, onEdgeDoubleClick, onConnect, onDelete.
 */
export function Diagram({ elements, waypoints, on }) {
  const { nodes, setNodes, shownEdges, setEdges } = elements;
  // React Flow's own light or dark class must agree with the theme's, whose colours it would otherwise reset.
  const { appearance } = useThemeContext();
  return (
    <WaypointContext.Provider value={waypoints}>
      <ReactFlow
        nodes={nodes}
        edges={shownEdges}
        nodeTypes={NODE_TYPES}
        edgeTypes={EDGE_TYPES}
        onNodesChange={(changes) => setNodes((n) => applyNodeChanges(changes, n))}
        onEdgesChange={(changes) => setEdges((e) => applyEdgeChanges(changes, e))}
        {...on}
        deleteKeyCode={null}
        multiSelectionKeyCode={['Shift', 'Meta', 'Control']}
        selectionKeyCode="Shift"
        zoomOnDoubleClick={false}
        defaultViewport={{ x: 0, y: 0, zoom: 1 }}
        minZoom={0.2}
        maxZoom={3}
        snapToGrid
        snapGrid={[4, 4]}
        proOptions={{ hideAttribution: true }}
        colorMode={appearance === 'dark' ? 'dark' : 'light'}
      >
        <Background variant={BackgroundVariant.Dots} gap={16} size={1.2} />
        {/* Its fit button shows the whole diagram however small (an overview); the toolbar's fits at a readable zoom. */}
        <Controls showInteractive={false} position="bottom-left" fitViewOptions={{ maxZoom: 1, padding: FIT_PADDING }} />
        {nodes.length > 0 && (
          <MiniMap
            pannable
            zoomable
            position="bottom-right"
            ariaLabel="minimap"
            nodeColor={(n) => `var(--${categoryOf(n.data.block.type).color}-9)`}
            nodeBorderRadius={3}
            style={{ width: 168, height: 112 }}
          />
        )}
      </ReactFlow>
    </WaypointContext.Provider>
  );
}
