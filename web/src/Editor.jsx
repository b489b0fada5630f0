// The block-diagram editor: a palette from the block library, blocks
// dragged onto the canvas and linked port to port, links bent through
// waypoints, a form for the selected block's parameters (or the model's
// settings), subsystems opened in place, the automatic layout, selection,
// clipboard, alignment, turning and mirroring, undo and redo, and the
// server's check shown on the block and port it names, an unlinked input's
// fix offered as actions (a link from an output here, a Constant fed in).
// Each of these is a hook or a component of editor/.
import { useEffect, useRef, useState } from 'react';
import { Text } from '@radix-ui/themes';
import { ReactFlowProvider, useReactFlow } from '@xyflow/react';
import { diagramAt, targets } from './model.js';
import { focusStore, modelStore, useStore } from './store.js';
import { Diagram } from './editor/Diagram.jsx';
import { Palette } from './editor/Palette.jsx';
import { SidePanel } from './editor/SidePanel.jsx';
import { StatusBar } from './editor/StatusBar.jsx';
import { Toolbar } from './editor/Toolbar.jsx';
import { fixOf } from './editor/fix.js';
import { useAddBlock } from './editor/useAddBlock.js';
import { useCheck } from './editor/useCheck.js';
import { useClipboard } from './editor/useClipboard.js';
import { useEdits } from './editor/useEdits.js';
import { useElements } from './editor/useElements.js';
import { useFading } from './editor/useFading.js';
import { useFocus } from './editor/useFocus.js';
import { useHistory } from './editor/useHistory.js';
import { useLayout } from './editor/useLayout.js';
import { usePorts } from './editor/usePorts.js';
import { useSelection } from './editor/useSelection.js';
import { useShortcuts } from './editor/useShortcuts.js';
import { useViewport } from './editor/useViewport.js';
import { useWaypoints } from './editor/useWaypoints.js';
import './editor.css';

/** What an empty diagram shows. */
function Empty({ inside }) {
  return (
    <div className="canvas-empty" data-testid="canvas-empty">
      <Text size="3" weight="medium">
        {inside ? 'This subsystem is empty' : 'An empty model'}
      </Text>
      <Text size="2" color="gray">
        Drag blocks here from the palette, or double-click them there. Press / to search.
      </Text>
    </div>
  );
}

/** The canvas of the model being edited (store.js), whose text is `text`. */
function Canvas({ text, library, active }) {
  const { doc, generation } = useStore(modelStore);
  const setModel = modelStore.set;
  const focus = useStore(focusStore);
  // Which opening is shown, for what awaits the server across one.
  const generationRef = useRef(generation);
  generationRef.current = generation;
  const flow = useReactFlow();
  const [path, setPath] = useState([]);
  const searchRef = useRef(null);
  const canvasRef = useRef(null);
  const diagram = diagramAt(doc, path);
  const prefix = path.length ? path.join('/') + '/' : '';
  // Where blocks the file places nowhere are drawn (useLayout's `positionOf`), for `update`.
  const placeOf = useRef(() => ({ x: 0, y: 0 }));
  const history = useHistory({ doc, generation, path, setModel, placeOf });
  const { update } = history;
  // Another model opened (or New): shown from its top level.
  useEffect(() => setPath([]), [generation]);
  const [ports, setPorts] = usePorts(diagram);
  const check = useCheck(text);
  const { sizeOf, positionOf } = useLayout(diagram, ports);
  placeOf.current = positionOf;
  const elements = useElements({ diagram, ports, check, prefix, positionOf, generation });
  const { nodes, selectNext } = elements;
  const selection = useSelection({ ...elements, diagram });
  const view = useViewport({ flow, nodes, active, canvasRef, generation, focus });
  useFocus({ focus, path, setPath, selectNext, selectOnly: selection.only });
  // A note (copied, pasted) and a link refused at its drop, and why, fade after a while.
  const [note, setNote] = useFading(5000);
  const [refused, setRefused] = useFading(8000);
  const clipboard = useClipboard({ ids: selection.ids, latest: history.latest, path, positionOf, update, selectNext, setNote });
  const adding = useAddBlock({ flow, canvasRef, history, path, library, generationRef, ports, setPorts, placeOf, selectNext, selectNone: selection.none });
  const edits = useEdits({ flow, diagram, nodes, edges: elements.edges, ports, selection, update, positionOf, sizeOf, selectNext, fitNext: view.fitNext, setRefused });
  const { waypoints, onEdgeDoubleClick } = useWaypoints({ flow, nodes, update });
  const open = (inside) => {
    view.fitNext();
    setPath(inside);
  };
  const act = {
    undo: history.undo,
    redo: history.redo,
    layOut: edits.layOutAll,
    align: edits.alignSelection,
    rotate: () => edits.turnSelection('rotate'),
    flip: () => edits.turnSelection('flip'),
    copy: clipboard.copySelection,
    paste: clipboard.pasteClipboard,
    remove: edits.removeSelection,
    fit: () => view.fitReadable(200),
  };
  useShortcuts(active, { ...act, selectAll: selection.all, search: () => searchRef.current?.focus() });

  const blocks = (diagram.blocks || []).length;
  const selected = selection.ids.length;
  const can = { ...history.can, layOut: blocks > 0, align: selected > 1, turn: selected > 0, remove: selected > 0 || selection.links.length > 0 };
  const on = {
    onNodeDragStop: edits.onNodeDragStop,
    onNodeDoubleClick: (_, node) => node.data.block.type === 'Subsystem' && open([...path, node.id]),
    onEdgeDoubleClick,
    onConnect: edits.onConnect,
    onDelete: edits.onDelete,
  };
  const counts = { blocks, links: (diagram.links || []).reduce((n, l) => n + targets(l).length, 0), selected };
  return (
    <div className="editor">
      {/* At the top level an Outport is an Output: only Output is offered there. */}
      <Palette ref={searchRef} library={path.length ? library : library.filter((e) => e.type !== 'Outport')} onAdd={adding.addInView} />
      <section className="canvas" ref={canvasRef} onDragOver={(e) => e.preventDefault()} onDrop={adding.onDrop}>
        <Toolbar act={act} can={can} crumbs={[doc.name ? String(doc.name) : 'model', ...path]} onCrumb={(i) => open(path.slice(0, i))} />
        {blocks === 0 && <Empty inside={path.length > 0} />}
        <Diagram elements={elements} waypoints={waypoints} on={on} />
        <StatusBar check={check} fix={fixOf({ check, prefix, diagram, ports, nodes, update, add: adding.add })} refused={refused} note={note} counts={counts} />
      </section>
      {/* Only while shown: its fields' labels (step, stop, solver) would be found by the other views' too. */}
      {active && <SidePanel doc={doc} blocks={selection.blocks} library={library} update={update} onRename={edits.rename} onAlign={edits.alignSelection} />}
    </div>
  );
}

/** The editor, with React Flow's context. */
export function Editor(props) {
  return (
    <ReactFlowProvider>
      <Canvas {...props} />
    </ReactFlowProvider>
  );
}
