// The block-diagram editor: a palette from the block library, blocks
// dragged onto the canvas and linked port to port, a form for the selected
// block's parameters from the schema, subsystems opened in place, undo and
// redo, and the server's check shown on the block and port it names.
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import {
  Background,
  Controls,
  Handle,
  Position,
  ReactFlow,
  ReactFlowProvider,
  applyEdgeChanges,
  applyNodeChanges,
  useReactFlow,
  useUpdateNodeInternals,
} from '@xyflow/react';
import { api } from './api.js';
import { serialize } from './format.js';
import {
  addLink,
  autoLayout,
  copy,
  diagramAt,
  endOf,
  newBlock,
  num,
  parse,
  portName,
  removeBlock,
  removeLink,
  renameBlock,
  splitEnd,
  stringify,
  targets,
} from './model.js';

/** A block on the canvas: its id and type, a handle per port. */
function BlockNode({ id, data }) {
  const { block, ports, error } = data;
  const inputs = ports?.inputs || [];
  const outputs = ports?.outputs || [];
  // Handles come and go with the parameters: React Flow measures them again.
  const updateNodeInternals = useUpdateNodeInternals();
  const shape = `${inputs.join(',')}|${outputs.join(',')}`;
  useEffect(() => updateNodeInternals(id), [id, shape, updateNodeInternals]);
  const height = Math.max(44, 18 * Math.max(inputs.length, outputs.length) + 16);
  const at = (i, n) => `${((i + 1) / (n + 1)) * 100}%`;
  const portClass = (name) => (error?.port === name ? 'port port-error' : 'port');
  return (
    <div
      className={error ? 'block block-error' : 'block'}
      style={{ height }}
      data-testid={`block-${block.id}`}
      data-error={error ? error.message : undefined}
      title={error ? error.message : undefined}
    >
      <div className="block-id">{block.id}</div>
      <div className="block-type">{block.type}</div>
      {inputs.map((p, i) => (
        <Handle
          key={`in:${p}`}
          id={`in:${p}`}
          type="target"
          position={Position.Left}
          style={{ top: at(i, inputs.length) }}
          className={portClass(p)}
          data-testid={`port-${block.id}-in-${p}`}
          data-port-error={error?.port === p ? error.message : undefined}
          title={`input ${p}`}
        />
      ))}
      {outputs.map((p, i) => (
        <Handle
          key={`out:${p}`}
          id={`out:${p}`}
          type="source"
          position={Position.Right}
          style={{ top: at(i, outputs.length) }}
          className="port"
          data-testid={`port-${block.id}-out-${p}`}
          title={`output ${p}`}
        />
      ))}
    </div>
  );
}

const NODE_TYPES = { block: BlockNode };

/** One parameter's field: text for strings, a checkbox for booleans, JSON otherwise. */
function ParamField({ name, schema, value, onChange }) {
  const isString = String(schema?.$ref || schema?.type || '').includes('string') && typeof value !== 'object';
  const kind = String(schema?.$ref || schema?.type || '');
  const isBool = kind.includes('boolean') || kind.endsWith('/flag') || typeof value === 'boolean';
  const shown = value === undefined ? '' : isString ? String(value) : stringify(value);
  const [text, setText] = useState(shown);
  const [bad, setBad] = useState(false);
  useEffect(() => setText(shown), [shown]);
  if (isBool) {
    return (
      <label className="field">
        <span>{name}</span>
        <input type="checkbox" aria-label={`param ${name}`} checked={value === true} onChange={(e) => onChange(e.target.checked)} />
      </label>
    );
  }
  const commit = () => {
    if (text.trim() === '') return onChange(undefined);
    if (isString) return onChange(text);
    try {
      onChange(parse(text));
      setBad(false);
    } catch {
      setBad(true);
    }
  };
  return (
    <label className="field" title={schema?.description}>
      <span>{name}</span>
      <input
        aria-label={`param ${name}`}
        className={bad ? 'bad' : ''}
        value={text}
        onChange={(e) => setText(e.target.value)}
        onBlur={commit}
        onKeyDown={(e) => e.key === 'Enter' && commit()}
      />
    </label>
  );
}

/** The form of the selected block. */
function BlockForm({ block, entry, onRename, onParam, onSampleTime }) {
  const [id, setId] = useState(block.id);
  useEffect(() => setId(block.id), [block.id]);
  const names = Array.from(new Set([...Object.keys(entry?.params || {}), ...Object.keys(block.params || {})]));
  return (
    <div className="form" data-testid="block-form">
      <h3>
        {block.type} <small>{entry?.summary}</small>
      </h3>
      <label className="field">
        <span>id</span>
        <input
          aria-label="block id"
          value={id}
          onChange={(e) => setId(e.target.value)}
          onBlur={() => id !== block.id && onRename(id)}
          onKeyDown={(e) => e.key === 'Enter' && id !== block.id && onRename(id)}
        />
      </label>
      {names.map((name) => (
        <ParamField
          key={`${block.id}:${name}`}
          name={name}
          schema={entry?.params?.[name]}
          value={block.params?.[name]}
          onChange={(v) => onParam(name, v)}
        />
      ))}
      {block.type !== 'Subsystem' && (
        <ParamField key={`${block.id}:sample_time`} name="sample_time" schema={{}} value={block.sample_time} onChange={onSampleTime} />
      )}
    </div>
  );
}

function Canvas({ model, setModel, library }) {
  const { doc, style } = model;
  const flow = useReactFlow();
  const [path, setPath] = useState([]);
  const [selected, setSelected] = useState(null);
  const [ports, setPorts] = useState({});
  const [error, setError] = useState(null);
  const [nodes, setNodes] = useState([]);
  const [shownEdges, setShownEdges] = useState([]);
  const [filter, setFilter] = useState('');
  const history = useRef({ undo: [], redo: [] });
  const diagram = diagramAt(doc, path);
  const prefix = path.length ? path.join('/') + '/' : '';

  // The newest document, also between a change and the render it causes.
  const latest = useRef(doc);
  useEffect(() => {
    latest.current = doc;
  }, [doc]);
  const update = useCallback(
    (change) => {
      const next = copy(latest.current);
      change(diagramAt(next, path), next);
      history.current.undo.push(latest.current);
      history.current.redo = [];
      latest.current = next;
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
      setModel((m) => ({ ...m, doc }));
    },
    [setModel],
  );
  const undo = useCallback(() => travel(history.current.undo, history.current.redo), [travel]);
  const redo = useCallback(() => travel(history.current.redo, history.current.undo), [travel]);
  useEffect(() => {
    const key = (e) => {
      if (!(e.ctrlKey || e.metaKey) || e.key.toLowerCase() !== 'z' || e.target.tagName === 'INPUT') return;
      e.preventDefault();
      (e.shiftKey ? redo : undo)();
    };
    window.addEventListener('keydown', key);
    return () => window.removeEventListener('keydown', key);
  }, [undo, redo]);

  // Each block's ports, from the server, for its type and parameters.
  useEffect(() => {
    let live = true;
    for (const b of diagram.blocks || []) {
      const { layout, ...def } = b;
      const key = stringify(def);
      if (ports[b.id]?.key === key) continue;
      api('POST', '/api/ports', key).then((r) => {
        if (live) setPorts((p) => ({ ...p, [b.id]: { key, ...(r.ok ? r.json : { inputs: [], outputs: [] }) } }));
      });
    }
    return () => {
      live = false;
    };
  }, [diagram, ports]);

  // The server's check, a moment after each change.
  const text = useMemo(() => serialize(doc, style), [doc, style]);
  useEffect(() => {
    const timer = setTimeout(async () => {
      const r = await api('POST', '/api/check', text);
      setError(r.ok ? null : { message: r.json?.error ?? r.text, ...(r.json?.place || {}) });
    }, 300);
    return () => clearTimeout(timer);
  }, [text]);

  const auto = useMemo(() => autoLayout(diagram), [diagram]);
  useEffect(() => {
    // Nodes keep what React Flow measured of them: a node without its
    // measured size stays hidden until its size changes.
    setNodes((previous) => {
      const measured = new Map(previous.map((n) => [n.id, n.measured]));
      return (diagram.blocks || []).map((b) => ({
        measured: measured.get(b.id),
        id: b.id,
        type: 'block',
        position: b.layout ? { x: num(b.layout.x), y: num(b.layout.y) } : auto[b.id],
        selected: b.id === selected,
        data: {
          block: b,
          ports: ports[b.id],
          error: error && error.block === prefix + b.id ? error : null,
        },
      }));
    });
  }, [diagram, ports, error, auto, selected, prefix]);

  const edges = useMemo(
    () =>
      (diagram.links || []).flatMap((l) => {
        const [src, sp] = splitEnd(l.from);
        return targets(l).map((t) => {
          const [dst, dp] = splitEnd(t);
          return {
            id: `${l.from}->${t}`,
            source: src,
            target: dst,
            sourceHandle: `out:${portName(ports[src]?.outputs, sp)}`,
            targetHandle: `in:${portName(ports[dst]?.inputs, dp)}`,
            data: { from: l.from, to: t },
          };
        });
      }),
    [diagram, ports],
  );

  useEffect(() => setShownEdges(edges), [edges]);
  // A model opened, or a subsystem entered: show all of it.
  useEffect(() => {
    const timer = setTimeout(() => flow.fitView({ maxZoom: 1 }), 100);
    return () => clearTimeout(timer);
  }, [model.file, path, flow]);

  const onConnect = ({ source, sourceHandle, target, targetHandle }) => {
    const out = sourceHandle.slice(4);
    const inp = targetHandle.slice(3);
    update((d) =>
      addLink(d, endOf(source, out, ports[source]?.outputs), endOf(target, inp, ports[target]?.inputs)),
    );
  };
  const onDrop = (e) => {
    e.preventDefault();
    const type = e.dataTransfer.getData('application/tandem-block');
    if (!type) return;
    add(type, flow.screenToFlowPosition({ x: e.clientX, y: e.clientY }));
  };
  const add = (type, position) => {
    const block = newBlock(diagramAt(latest.current, path), type, library, position);
    update((d) => d.blocks.push(block));
    setSelected(block.id);
  };
  const addAt = (type) => {
    const n = (diagramAt(latest.current, path).blocks || []).length;
    add(type, { x: 40 + 30 * (n % 10), y: 40 + 60 * (n % 8) });
  };

  const block = (diagram.blocks || []).find((b) => b.id === selected);
  const shown = library.filter((b) => b.type.toLowerCase().includes(filter.toLowerCase()));
  return (
    <div className="editor">
      <aside className="palette" aria-label="palette">
        <input placeholder="filter blocks" aria-label="filter blocks" value={filter} onChange={(e) => setFilter(e.target.value)} />
        {shown.map((b) => (
          <div
            key={b.type}
            className="palette-item"
            draggable
            data-testid={`palette-${b.type}`}
            title={b.summary}
            onDragStart={(e) => e.dataTransfer.setData('application/tandem-block', b.type)}
            onDoubleClick={() => addAt(b.type)}
          >
            {b.type}
          </div>
        ))}
      </aside>
      <section className="canvas" onDragOver={(e) => e.preventDefault()} onDrop={onDrop}>
        <div className="toolbar">
          <button onClick={undo} disabled={!history.current.undo.length}>Undo</button>
          <button onClick={redo} disabled={!history.current.redo.length}>Redo</button>
          <span className="crumbs">
            <button onClick={() => setPath([])}>{doc.name ? String(doc.name) : 'model'}</button>
            {path.map((id, i) => (
              <button key={i} onClick={() => setPath(path.slice(0, i + 1))}>/ {id}</button>
            ))}
          </span>
        </div>
        <ReactFlow
          nodes={nodes}
          edges={shownEdges}
          onEdgesChange={(changes) => setShownEdges((e) => applyEdgeChanges(changes, e))}
          nodeTypes={NODE_TYPES}
          onNodesChange={(changes) => setNodes((n) => applyNodeChanges(changes, n))}
          onNodeDragStop={(_, node) =>
            update((d) => {
              const b = d.blocks.find((x) => x.id === node.id);
              if (b) b.layout = { x: Math.round(node.position.x), y: Math.round(node.position.y) };
            })
          }
          onNodeClick={(_, node) => setSelected(node.id)}
          onNodeDoubleClick={(_, node) => node.data.block.type === 'Subsystem' && setPath([...path, node.id])}
          onPaneClick={() => setSelected(null)}
          onConnect={onConnect}
          onNodesDelete={(gone) => update((d) => gone.forEach((n) => removeBlock(d, n.id)))}
          onEdgesDelete={(gone) => update((d) => gone.forEach((e) => removeLink(d, e.data.from, e.data.to)))}
          deleteKeyCode={['Delete', 'Backspace']}
          defaultViewport={{ x: 0, y: 0, zoom: 1 }}
        >
          <Background />
          <Controls />
        </ReactFlow>
        <div className={error ? 'status status-error' : 'status'} data-testid="check-status">
          {error ? error.message : 'model checks'}
        </div>
      </section>
      <aside className="side">
        {block ? (
          <BlockForm
            block={block}
            entry={library.find((b) => b.type === block.type)}
            onRename={(to) => {
              if (!to || diagram.blocks.some((b) => b.id === to)) return;
              update((d) => renameBlock(d, block.id, to));
              setSelected(to);
            }}
            onParam={(name, value) =>
              update((d) => {
                const b = d.blocks.find((x) => x.id === block.id);
                b.params = { ...(b.params || {}) };
                if (value === undefined) delete b.params[name];
                else b.params[name] = value;
              })
            }
            onSampleTime={(value) =>
              update((d) => {
                const b = d.blocks.find((x) => x.id === block.id);
                if (value === undefined) delete b.sample_time;
                else b.sample_time = value;
              })
            }
          />
        ) : (
          <p className="hint">Drag a block from the palette (or double-click it), link ports by dragging from an output to an input, select a block to edit it, double-click a subsystem to open it; Delete removes, Ctrl+Z undoes.</p>
        )}
      </aside>
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
