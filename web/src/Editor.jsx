// The block-diagram editor: a palette from the block library, blocks
// dragged onto the canvas and linked port to port, links bent through
// waypoints, a form for the selected block's parameters (or the model's
// settings), subsystems opened in place, the automatic layout, selection,
// clipboard, alignment, turning and mirroring, undo and redo, and the
// server's check shown on the block and port it names, an unlinked input's
// fix offered as actions (a link from an output here, a Constant fed in).
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { Button, Flex, Text, useThemeContext } from '@radix-ui/themes';
import { CheckCircledIcon, CrossCircledIcon } from '@radix-ui/react-icons';
import {
  Background,
  BackgroundVariant,
  Controls,
  MarkerType,
  MiniMap,
  ReactFlow,
  ReactFlowProvider,
  applyEdgeChanges,
  applyNodeChanges,
  useReactFlow,
} from '@xyflow/react';
import { api } from './api.js';
import {
  addLink,
  align,
  clip,
  copy,
  diagramAt,
  endOf,
  layered,
  layOut,
  newBlock,
  num,
  paste,
  portName,
  readClip,
  removeBlock,
  removeLink,
  renameBlock,
  setWaypoints,
  splitEnd,
  stringify,
  targets,
  turn,
} from './model.js';
import { isTyping } from './shortcuts.js';
import { BlockNode } from './editor/BlockNode.jsx';
import { LinkEdge, WaypointContext } from './editor/LinkEdge.jsx';
import { Palette } from './editor/Palette.jsx';
import { SidePanel } from './editor/SidePanel.jsx';
import { Toolbar } from './editor/Toolbar.jsx';
import { categoryOf } from './editor/categories.js';
import { describeError } from './editor/errors.js';
import { blockSize, freeSpot } from './editor/geometry.js';
import './editor.css';

const NODE_TYPES = { block: BlockNode };
const EDGE_TYPES = { link: LinkEdge };
const ARROW = { type: MarkerType.ArrowClosed, width: 14, height: 14, color: 'var(--gray-10)' };
const ARROW_SELECTED = { ...ARROW, color: 'var(--accent-9)' };

/** What was copied last, for when the system clipboard cannot be read or written. */
let pageClipboard = '';

/** A block's definition without its layout: what its ports depend on. */
const portsKey = (b) => {
  const { layout, ...def } = b;
  return stringify(def);
};

/** The points of a link's layout as numbers. */
const pointsOf = (link) => (link.layout?.waypoints || []).map((p) => ({ x: num(p.x), y: num(p.y) }));

const distance = (a, b) => Math.hypot(a.x - b.x, a.y - b.y);

/**
 * Fitting keeps the zoom at 1, where the smallest text on a block (its
 * type and port names, 11 px) is 11 px on screen: a diagram larger than
 * the canvas is shown from its left and top edges, where its signals
 * start, and scrolled, instead of shrunk to unreadable text.
 */
const FIT_PADDING = 0.1;

function Canvas({ model, text, setModel, library, active, focus }) {
  const { doc, generation } = model;
  // Which opening is shown, for what awaits the server across one.
  const generationRef = useRef(generation);
  generationRef.current = generation;
  const flow = useReactFlow();
  // React Flow's own light or dark class must agree with the theme's, whose colours it would otherwise reset.
  const { appearance } = useThemeContext();
  const [path, setPath] = useState([]);
  const [ports, setPorts] = useState({});
  const [check, setCheck] = useState(null);
  const [nodes, setNodes] = useState([]);
  const [edges, setEdges] = useState([]);
  const [dragged, setDragged] = useState(null);
  const [note, setNote] = useState('');
  // A link refused at its drop, and why.
  const [refused, setRefused] = useState('');
  const [, setSteps] = useState(0);
  const history = useRef({ undo: [], redo: [] });
  const searchRef = useRef(null);
  const canvasRef = useRef(null);
  // Blocks to select once the nodes are built again (after a paste or an add).
  const toSelect = useRef(null);
  // Whether the view should show the whole diagram once it is drawn.
  const toFit = useRef(true);
  // A block to bring into view once it is drawn (named by another view).
  const toShow = useRef(null);
  const diagram = diagramAt(doc, path);
  const prefix = path.length ? path.join('/') + '/' : '';

  // The newest document, also between a change and the render it causes.
  const latest = useRef(doc);
  useEffect(() => {
    latest.current = doc;
  }, [doc]);
  // Where blocks the file places nowhere are drawn (set below, used by `update`).
  const placeOf = useRef(() => ({ x: 0, y: 0 }));
  const update = useCallback(
    (change) => {
      const next = copy(latest.current);
      const here = diagramAt(next, path);
      // A change fixes the drawn place of every block, so that none moves because of another's.
      for (const b of here.blocks || []) if (!b.layout) b.layout = placeOf.current(b);
      change(here, next);
      history.current.undo.push(latest.current);
      history.current.redo = [];
      latest.current = next;
      setSteps((n) => n + 1);
      setModel((m) => ({ ...m, doc: next }));
    },
    [path, setModel],
  );
  // One step back (undo) or forward (redo) through the history.
  const travel = useCallback(
    (from, to) => {
      const doc = from.pop();
      if (!doc) return;
      to.push(latest.current);
      latest.current = doc;
      setSteps((n) => n + 1);
      setModel((m) => ({ ...m, doc }));
    },
    [setModel],
  );
  const undo = useCallback(() => travel(history.current.undo, history.current.redo), [travel]);
  const redo = useCallback(() => travel(history.current.redo, history.current.undo), [travel]);

  // Another model opened (or New): its own history, from its top level, shown whole.
  useEffect(() => {
    history.current = { undo: [], redo: [] };
    setSteps((n) => n + 1);
    setPath([]);
    toSelect.current = new Set();
    toFit.current = true;
  }, [generation]);

  // Each block's ports, from the server, for its type and parameters: asked
  // once per block and key; a reply for a key asked before a newer one is
  // dropped.
  const asked = useRef(new Map());
  useEffect(() => {
    for (const b of diagram.blocks || []) {
      const key = portsKey(b);
      if (ports[b.id]?.key === key || asked.current.get(b.id) === key) continue;
      asked.current.set(b.id, key);
      api('POST', '/api/ports', key).then((r) => {
        if (asked.current.get(b.id) !== key) return;
        setPorts((p) => ({ ...p, [b.id]: { key, ...(r.ok ? r.json : { inputs: [], outputs: [] }) } }));
      });
    }
  }, [diagram, ports]);

  // The server's check of the model's text (`text`, made by the page), a
  // moment after each change; a reply about a text changed since is dropped.
  useEffect(() => {
    let current = true;
    const timer = setTimeout(async () => {
      const r = await api('POST', '/api/check', text);
      if (!current) return;
      const place = r.json?.place || {};
      setCheck(r.ok ? null : { message: describeError(r.json || { error: r.text }), block: place.block, port: place.port, kind: r.json?.kind });
    }, 300);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [text]);

  // A block another view names (`focus`, a new object each time): its
  // diagram opened, the block selected and brought into view.
  useEffect(() => {
    if (!focus?.block) return;
    const inside = focus.block.split('/');
    const id = inside.pop();
    toShow.current = id;
    if (inside.join('/') !== path.join('/')) {
      toSelect.current = new Set([id]);
      setPath(inside);
    } else setNodes((ns) => ns.map((n) => ({ ...n, selected: n.id === id })));
  }, [focus]);

  const sizeOf = useCallback((b) => blockSize(b, ports[b.id]), [ports]);
  // Blocks the file places nowhere are laid out along the links.
  const auto = useMemo(
    () => ((diagram.blocks || []).every((b) => b.layout) ? {} : layered(diagram, sizeOf)),
    [diagram, sizeOf],
  );
  const positionOf = useCallback(
    (b) => (b.layout ? { x: num(b.layout.x), y: num(b.layout.y) } : auto[b.id] || { x: 0, y: 0 }),
    [auto],
  );

  placeOf.current = positionOf;

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

  const built = useMemo(
    () =>
      (diagram.links || []).flatMap((l, index) => {
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
      }),
    [diagram, ports],
  );
  useEffect(
    () =>
      setEdges((previous) => {
        const selected = new Set(previous.filter((e) => e.selected).map((e) => e.id));
        return built.map((e) => ({ ...e, selected: selected.has(e.id) }));
      }),
    [built],
  );
  const shownEdges = useMemo(() => edges.map((e) => ({ ...e, markerEnd: e.selected ? ARROW_SELECTED : ARROW })), [edges]);

  // Show the whole diagram once its blocks are measured (an empty one at
  // scale 1), or the block to show.
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

  /** The diagram at zoom 1: centred where it fits the canvas, else from its left or top edge. */
  function fitReadable(duration = 0) {
    const pane = canvasRef.current?.querySelector('.react-flow');
    if (!pane || nodes.length === 0) return;
    const bounds = flow.getNodesBounds(nodes);
    const place = (size, start, length) =>
      length <= size * (1 - FIT_PADDING) ? (size - length) / 2 - start : (size * FIT_PADDING) / 2 - start;
    flow.setViewport({ x: place(pane.clientWidth, bounds.x, bounds.width), y: place(pane.clientHeight, bounds.y, bounds.height), zoom: 1 }, { duration });
  }

  const selectedIds = nodes.filter((n) => n.selected).map((n) => n.id);
  const selectedBlocks = (diagram.blocks || []).filter((b) => selectedIds.includes(b.id));
  const selectedEdges = edges.filter((e) => e.selected);

  // A link into an input that already has one is refused at the drop, with the link there named.
  const onConnect = ({ source, sourceHandle, target, targetHandle }) => {
    const out = sourceHandle.slice(4);
    const inp = targetHandle.slice(3);
    const there = edges.find((e) => e.target === target && e.targetHandle === targetHandle);
    if (there) return setRefused(`Not linked: ${target}'s input ${inp} already comes from ${there.data.from}; remove that link first`);
    setRefused('');
    update((d) => addLink(d, endOf(source, out, ports[source]?.outputs), endOf(target, inp, ports[target]?.inputs)));
  };
  // A new block of `type` centred on `at` (flow coordinates), or at the
  // free place nearest it when `free`, selected; `also(diagram, block)`
  // is done in the same step (a link to it).
  const add = async (type, at, free = false, also = () => {}) => {
    // Nothing stays selected (nor its form shown) while the new block's ports are asked for.
    setNodes((ns) => ns.map((n) => (n.selected ? { ...n, selected: false } : n)));
    const opening = generation;
    const probe = newBlock(diagramAt(latest.current, path), type, library, { x: 0, y: 0 });
    const key = portsKey(probe);
    const r = await api('POST', '/api/ports', key);
    // Another model opened meanwhile: the block was for the one closed.
    if (generationRef.current !== opening) return;
    const found = r.ok ? r.json : { inputs: [], outputs: [] };
    // The id is chosen now, against the diagram as it is after the wait.
    const block = newBlock(diagramAt(latest.current, path), type, library, { x: 0, y: 0 });
    setPorts((p) => ({ ...p, [block.id]: { key, ...found } }));
    const size = blockSize(block, found);
    const boxes = (diagramAt(latest.current, path).blocks || []).map((b) => ({ ...placeOf.current(b), ...blockSize(b, ports[b.id]) }));
    block.layout = free ? freeSpot(boxes, size, at) : { x: Math.round(at.x - size.width / 2), y: Math.round(at.y - size.height / 2) };
    toSelect.current = new Set([block.id]);
    update((d) => {
      d.blocks = d.blocks || [];
      d.blocks.push(block);
      also(d, block);
    });
  };
  const onDrop = (e) => {
    e.preventDefault();
    const type = e.dataTransfer.getData('application/tandem-block');
    if (type) add(type, flow.screenToFlowPosition({ x: e.clientX, y: e.clientY }));
  };
  // Added from the palette (double-click, Enter): the free place nearest the middle of the view.
  const addInView = (type) => {
    const box = canvasRef.current.querySelector('.react-flow').getBoundingClientRect();
    add(type, flow.screenToFlowPosition({ x: box.x + box.width / 2, y: box.y + box.height / 2 }), true);
  };

  const copySelection = async () => {
    if (!selectedIds.length) return;
    // Blocks the file places nowhere are copied where they are drawn.
    const here = copy(diagramAt(latest.current, path));
    for (const b of here.blocks || []) if (!b.layout) b.layout = positionOf(b);
    const data = clip(here, selectedIds);
    pageClipboard = data;
    try {
      await navigator.clipboard.writeText(data);
      setNote(`Copied ${selectedIds.length} block${selectedIds.length > 1 ? 's' : ''}`);
    } catch {
      setNote(`Copied ${selectedIds.length} block${selectedIds.length > 1 ? 's' : ''} (in this page only)`);
    }
  };
  const pasteClipboard = async () => {
    let data = null;
    try {
      data = readClip(await navigator.clipboard.readText());
    } catch {
      data = null;
    }
    data = data || readClip(pageClipboard);
    if (!data) return setNote('Nothing to paste: copy blocks first');
    let ids = [];
    update((d) => {
      ids = paste(d, data);
    });
    toSelect.current = new Set(ids);
    setNote(`Pasted ${ids.length} block${ids.length > 1 ? 's' : ''}`);
  };
  const turnSelection = (how) =>
    selectedIds.length &&
    update((d) => d.blocks.filter((b) => selectedIds.includes(b.id)).forEach((b) => turn(b, how, positionOf(b))));
  const alignSelection = (how) =>
    update((d) => align(d, selectedIds, how, (b) => ({ ...positionOf(b), ...sizeOf(b) })));
  const layOutAll = () => {
    if (!(diagram.blocks || []).length) return;
    toFit.current = true;
    update((d) => layOut(d, sizeOf));
  };
  const removeSelection = () => flow.deleteElements({ nodes: nodes.filter((n) => n.selected), edges: selectedEdges });
  const onDelete = ({ nodes: goneNodes, edges: goneEdges }) => {
    const gone = new Set(goneNodes.map((n) => n.id));
    if (!gone.size && !goneEdges.length) return;
    update((d) => {
      gone.forEach((id) => removeBlock(d, id));
      goneEdges.filter((e) => !gone.has(e.source) && !gone.has(e.target)).forEach((e) => removeLink(d, e.data.from, e.data.to));
    });
  };
  const rename = (from, to) => {
    if (to === from) return;
    if (!to || /[./]/.test(to)) throw new Error('an id is not empty and has no . or /');
    if ((diagram.blocks || []).some((b) => b.id === to)) throw new Error(`${to} is taken`);
    toSelect.current = new Set([to]);
    update((d) => renameBlock(d, from, to));
  };

  // A block's centre on the canvas.
  const centreOf = (id) => {
    const n = nodes.find((x) => x.id === id);
    return n ? { x: n.position.x + (n.measured?.width || 0) / 2, y: n.position.y + (n.measured?.height || 0) / 2 } : { x: 0, y: 0 };
  };
  // A double-click on a link bends it there: a waypoint where it adds the least length.
  const onEdgeDoubleClick = (e, edge) => {
    const p = flow.screenToFlowPosition({ x: e.clientX, y: e.clientY });
    const point = { x: Math.round(p.x), y: Math.round(p.y) };
    update((d) => {
      const link = d.links[edge.data.link];
      const points = pointsOf(link);
      const chain = [centreOf(edge.source), ...points, centreOf(edge.target)];
      let best = 0;
      let cost = Infinity;
      for (let i = 0; i + 1 < chain.length; i++) {
        const c = distance(chain[i], point) + distance(point, chain[i + 1]) - distance(chain[i], chain[i + 1]);
        if (c < cost) [best, cost] = [i, c];
      }
      points.splice(best, 0, point);
      setWaypoints(link, points);
    });
  };
  const lastTap = useRef(null);
  const removeWaypoint = (link, index) =>
    update((d) => {
      const points = pointsOf(d.links[link]);
      points.splice(index, 1);
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
          if (!last) {
            // Two clicks on a waypoint in quick succession remove it.
            const tap = { link, index, time: performance.now() };
            const before = lastTap.current;
            lastTap.current = tap;
            if (!insert && before && before.link === link && before.index === index && tap.time - before.time < 500) {
              lastTap.current = null;
              removeWaypoint(link, index);
            }
            return;
          }
          update((d) => {
            const points = pointsOf(d.links[link]);
            if (insert) points.splice(index, 0, last);
            else points[index] = last;
            setWaypoints(d.links[link], points);
          });
        };
        window.addEventListener('pointermove', move);
        window.addEventListener('pointerup', up);
      },
    }),
    [dragged, flow, update],
  );

  // The editor's shortcuts, while it is shown and nothing else has the keys.
  useEffect(() => {
    if (!active) return undefined;
    const key = (e) => {
      if (isTyping(e) || e.defaultPrevented || document.querySelector('[role="dialog"], [role="alertdialog"], [role="menu"]')) return;
      const mod = e.ctrlKey || e.metaKey;
      const k = e.key.toLowerCase();
      const act = {
        z: mod && (e.shiftKey ? redo : undo),
        y: mod && redo,
        a: mod && (() => setNodes((ns) => ns.map((n) => ({ ...n, selected: true })))),
        c: mod && !window.getSelection()?.toString() && copySelection,
        v: mod && pasteClipboard,
        r: !mod && !e.altKey && (() => turnSelection('rotate')),
        f: !mod && !e.altKey && (() => turnSelection('flip')),
        l: !mod && !e.altKey && layOutAll,
        '/': !mod && (() => searchRef.current?.focus()),
        delete: !mod && removeSelection,
        backspace: !mod && removeSelection,
      }[k];
      if (!act) return;
      e.preventDefault();
      act();
    };
    window.addEventListener('keydown', key);
    return () => window.removeEventListener('keydown', key);
  });

  // A note in the status bar (copied, pasted, a link refused) fades after a while.
  useEffect(() => {
    if (!note) return undefined;
    const timer = setTimeout(() => setNote(''), 5000);
    return () => clearTimeout(timer);
  }, [note]);
  useEffect(() => {
    if (!refused) return undefined;
    const timer = setTimeout(() => setRefused(''), 8000);
    return () => clearTimeout(timer);
  }, [refused]);

  // An input the check finds unlinked in the diagram shown: the fix offered
  // as actions, a link from one of the outputs here or a Constant fed in.
  const unlinked =
    check?.kind === 'Unconnected' && check.port && check.block?.startsWith(prefix) && !check.block.slice(prefix.length).includes('/')
      ? { id: check.block.slice(prefix.length), port: check.port }
      : null;
  const into = unlinked && endOf(unlinked.id, unlinked.port, ports[unlinked.id]?.inputs);
  const sources = unlinked
    ? (diagram.blocks || [])
        .filter((b) => b.id !== unlinked.id)
        .flatMap((b) => (ports[b.id]?.outputs || []).map((o) => endOf(b.id, o, ports[b.id].outputs)))
    : [];
  const linkInto = (from) => update((d) => addLink(d, from, into));
  const feedConstant = async () => {
    const target = nodes.find((n) => n.id === unlinked.id);
    const at = target ? { x: target.position.x - 120, y: target.position.y + (target.measured?.height ?? 56) / 2 } : { x: 0, y: 0 };
    await add('Constant', at, true, (d, block) => addLink(d, block.id, into));
  };

  const links = (diagram.links || []).reduce((n, l) => n + targets(l).length, 0);
  const crumbs = [doc.name ? String(doc.name) : 'model', ...path];
  return (
    <div className="editor">
      {/* At the top level an Outport is an Output: only Output is offered there. */}
      <Palette ref={searchRef} library={path.length ? library : library.filter((e) => e.type !== 'Outport')} onAdd={addInView} />
      <section className="canvas" ref={canvasRef} onDragOver={(e) => e.preventDefault()} onDrop={onDrop}>
        <Toolbar
          act={{
            undo,
            redo,
            layOut: layOutAll,
            align: alignSelection,
            rotate: () => turnSelection('rotate'),
            flip: () => turnSelection('flip'),
            copy: copySelection,
            paste: pasteClipboard,
            remove: removeSelection,
            fit: () => fitReadable(200),
          }}
          can={{
            undo: history.current.undo.length > 0,
            redo: history.current.redo.length > 0,
            layOut: (diagram.blocks || []).length > 0,
            align: selectedIds.length > 1,
            turn: selectedIds.length > 0,
            remove: selectedIds.length > 0 || selectedEdges.length > 0,
          }}
          crumbs={crumbs}
          onCrumb={(i) => {
            toFit.current = true;
            setPath(path.slice(0, i));
          }}
        />
        {(diagram.blocks || []).length === 0 && (
          <div className="canvas-empty" data-testid="canvas-empty">
            <Text size="3" weight="medium">
              {path.length ? 'This subsystem is empty' : 'An empty model'}
            </Text>
            <Text size="2" color="gray">
              Drag blocks here from the palette, or double-click them there. Press / to search.
            </Text>
          </div>
        )}
        <WaypointContext.Provider value={waypoints}>
          <ReactFlow
            nodes={nodes}
            edges={shownEdges}
            nodeTypes={NODE_TYPES}
            edgeTypes={EDGE_TYPES}
            onNodesChange={(changes) => setNodes((n) => applyNodeChanges(changes, n))}
            onEdgesChange={(changes) => setEdges((e) => applyEdgeChanges(changes, e))}
            onNodeDragStop={(_, __, moved) =>
              update((d) => {
                for (const node of moved) {
                  const b = d.blocks.find((x) => x.id === node.id);
                  if (b) b.layout = { ...(b.layout || {}), x: Math.round(node.position.x), y: Math.round(node.position.y) };
                }
              })
            }
            onNodeDoubleClick={(_, node) => {
              if (node.data.block.type !== 'Subsystem') return;
              toFit.current = true;
              setPath([...path, node.id]);
            }}
            onEdgeDoubleClick={onEdgeDoubleClick}
            onConnect={onConnect}
            onDelete={onDelete}
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
        <Flex className={check ? 'status status-error' : 'status'} align="center" gap="2" px="3">
          {check ? <CrossCircledIcon className="status-icon" /> : <CheckCircledIcon className="status-icon" />}
          {refused && (
            <Text size="1" color="amber" data-testid="refused" role="alert">
              {refused}
            </Text>
          )}
          <Text size="1" className="status-message" data-testid="check-status">
            {check ? check.message : 'model checks'}
          </Text>
          {unlinked && (
            <Flex gap="2" align="center" className="fix-actions">
              {sources.length > 0 && (
                <select className="native-select fix-select" aria-label={`link into ${into}`} value="" onChange={(e) => linkInto(e.target.value)}>
                  <option value="" disabled>
                    Link from…
                  </option>
                  {sources.map((o) => (
                    <option key={o} value={o}>
                      {o}
                    </option>
                  ))}
                </select>
              )}
              <Button size="1" variant="soft" onClick={feedConstant}>
                Feed a Constant
              </Button>
            </Flex>
          )}
          <Text size="1" color="gray" className="status-counts" data-testid="status-counts">
            {note && `${note} · `}
            {(diagram.blocks || []).length} blocks · {links} links
            {selectedIds.length > 0 && ` · ${selectedIds.length} selected`}
          </Text>
        </Flex>
      </section>
      {/* Only while shown: its fields' labels (step, stop, solver) would be found by the other views' too. */}
      {active && (
        <SidePanel
          doc={doc}
          blocks={selectedBlocks}
          library={library}
          update={update}
          onRename={rename}
          onAlign={alignSelection}
        />
      )}
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
