// Editing a model document (the parsed file): the diagram at a subsystem
// path, links from ports and back, and new blocks with valid parameters.
import dagre from '@dagrejs/dagre';
import { parse, stringify } from 'lossless-json';

/** A deep copy that keeps number literals. */
export function copy(doc) {
  return parse(stringify(doc));
}

/** The diagram (an object with `blocks` and `links`) at subsystem `path`. */
export function diagramAt(doc, path) {
  let d = doc;
  for (const id of path) d = (d.blocks || []).find((b) => b.id === id) || { blocks: [], links: [] };
  return d;
}

/** `[block, port]` of a link end (`block` or `block.port`). */
export function splitEnd(end) {
  const i = end.indexOf('.');
  return i < 0 ? [end, undefined] : [end.slice(0, i), end.slice(i + 1)];
}

/** The port name `text` (a name, a 1-based number or nothing) stands for among `names`. */
export function portName(names, text) {
  if (!names || names.length === 0) return text;
  if (text === undefined) return names[0];
  if (/^\d+$/.test(text)) return names[Number(text) - 1] ?? text;
  return text;
}

/** The destinations of a link as a list. */
export function targets(link) {
  return Array.isArray(link.to) ? link.to : [link.to];
}

/** A link end naming `port` of `block` the way files do: the block alone when it has one such port. */
export function endOf(block, port, names) {
  return names && names.length === 1 ? block : `${block}.${port}`;
}

/** Adds a link from `from` to `to`, joining the link that already leaves `from`. */
export function addLink(diagram, from, to) {
  diagram.links = diagram.links || [];
  const existing = diagram.links.find((l) => l.from === from);
  if (!existing) {
    diagram.links.push({ from, to });
  } else if (!targets(existing).includes(to)) {
    existing.to = targets(existing).concat([to]);
  }
}

/** Removes destination `to` of the link leaving `from` (the link too when it has no other). */
export function removeLink(diagram, from, to) {
  const link = (diagram.links || []).find((l) => l.from === from);
  if (!link) return;
  const rest = targets(link).filter((t) => t !== to);
  if (rest.length === 0) diagram.links = diagram.links.filter((l) => l !== link);
  else link.to = rest.length === 1 ? rest[0] : rest;
}

/** Removes block `id` and every link end on it. */
export function removeBlock(diagram, id) {
  diagram.blocks = diagram.blocks.filter((b) => b.id !== id);
  const on = (end) => splitEnd(end)[0] === id;
  diagram.links = (diagram.links || []).flatMap((l) => {
    if (on(l.from)) return [];
    const rest = targets(l).filter((t) => !on(t));
    if (rest.length === 0) return [];
    return [{ ...l, to: Array.isArray(l.to) ? rest : rest[0] }];
  });
}

/** Renames block `from` to `to`, in its links too. */
export function renameBlock(diagram, from, to) {
  const block = diagram.blocks.find((b) => b.id === from);
  if (!block) return;
  block.id = to;
  const rename = (end) => {
    const [b, p] = splitEnd(end);
    return b === from ? (p === undefined ? to : `${to}.${p}`) : end;
  };
  for (const l of diagram.links || []) {
    l.from = rename(l.from);
    l.to = Array.isArray(l.to) ? l.to.map(rename) : rename(l.to);
  }
}

/** A new block of `type` with an id unused in `diagram` and its required parameters set. */
export function newBlock(diagram, type, library, position) {
  const base = type.charAt(0).toLowerCase() + type.slice(1).replace(/[^A-Za-z0-9]/g, '');
  let n = 1;
  while (diagram.blocks.some((b) => b.id === `${base}${n}`)) n++;
  const block = { id: `${base}${n}`, type };
  const entry = library.find((b) => b.type === type);
  const params = {};
  for (const name of entry?.required || []) {
    const schema = entry.params[name] || {};
    params[name] = schema.default ?? (String(schema.$ref || schema.type).includes('string') ? '' : 1);
  }
  if (Object.keys(params).length > 0) block.params = params;
  if (type === 'Subsystem') Object.assign(block, { blocks: [], links: [] });
  block.layout = { x: Math.round(position.x), y: Math.round(position.y) };
  return block;
}

/** A number from a literal or a number. */
export function num(v) {
  return typeof v === 'number' ? v : Number(String(v));
}

/** The block-to-block pairs of the diagram's links, one per destination. */
function blockEdges(diagram) {
  return (diagram.links || []).flatMap((l) => targets(l).map((t) => [splitEnd(l.from)[0], splitEnd(t)[0]]));
}

/**
 * Top-left positions of every block, laid out left to right along the
 * links (dagre's layered layout; feedback links are drawn backwards);
 * `sizeOf(block)` gives a block's `{width, height}`.
 */
export function layered(diagram, sizeOf) {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: 'LR', nodesep: 30, ranksep: 56, edgesep: 14, marginx: 40, marginy: 40 });
  g.setDefaultEdgeLabel(() => ({}));
  const blocks = diagram.blocks || [];
  for (const b of blocks) g.setNode(b.id, { ...sizeOf(b) });
  const ids = new Set(blocks.map((b) => b.id));
  blockEdges(diagram).forEach(([a, b], i) => ids.has(a) && ids.has(b) && a !== b && g.setEdge(a, b, {}, `e${i}`));
  dagre.layout(g);
  const placed = {};
  for (const b of blocks) {
    const n = g.node(b.id);
    placed[b.id] = { x: Math.round(n.x - n.width / 2), y: Math.round(n.y - n.height / 2) };
  }
  return placed;
}

/** Lays the whole diagram out (keeping each block's turn and mirror) and drops the links' waypoints. */
export function layOut(diagram, sizeOf) {
  const placed = layered(diagram, sizeOf);
  for (const b of diagram.blocks || []) b.layout = { ...(b.layout || {}), ...placed[b.id] };
  for (const l of diagram.links || []) dropWaypoints(l);
}

/** Removes a link's waypoints (and its layout when nothing else is left in it). */
function dropWaypoints(link) {
  if (!link.layout) return;
  const { waypoints, ...rest } = link.layout;
  if (Object.keys(rest).length) link.layout = rest;
  else delete link.layout;
}

/** Sets the waypoints of `link` (none removes them). */
export function setWaypoints(link, points) {
  if (!points.length) return dropWaypoints(link);
  link.layout = { ...(link.layout || {}), waypoints: points.map((p) => ({ x: Math.round(p.x), y: Math.round(p.y) })) };
}

/** The selected blocks of `diagram` and the links between them, as the clipboard's JSON text. */
export function clip(diagram, ids) {
  const chosen = new Set(ids);
  const blocks = (diagram.blocks || []).filter((b) => chosen.has(b.id));
  const links = (diagram.links || []).flatMap((l) => {
    if (!chosen.has(splitEnd(l.from)[0])) return [];
    const inside = targets(l).filter((t) => chosen.has(splitEnd(t)[0]));
    if (inside.length === 0) return [];
    return [{ ...l, to: Array.isArray(l.to) ? inside : inside[0] }];
  });
  return stringify({ tandem: 'blocks', blocks, links });
}

/**
 * The blocks and links of clipboard text `text`, or null when it holds
 * something else: blocks with string ids and types, and only the links
 * between them whose ends are strings.
 */
export function readClip(text) {
  let data;
  try {
    data = parse(text);
  } catch {
    return null;
  }
  if (!data || data.tandem !== 'blocks' || !Array.isArray(data.blocks)) return null;
  if (!data.blocks.every((b) => b && typeof b.id === 'string' && typeof b.type === 'string')) return null;
  const ids = new Set(data.blocks.map((b) => b.id));
  const inside = (end) => typeof end === 'string' && ids.has(splitEnd(end)[0]);
  const links = (Array.isArray(data.links) ? data.links : []).filter(
    (l) => l && inside(l.from) && (Array.isArray(l.to) ? l.to.length > 0 && l.to.every(inside) : inside(l.to)),
  );
  return { ...data, links };
}

/**
 * Adds a clipboard payload to `diagram`: ids already taken get the next
 * free number, links follow the new ids, and everything moves by `offset`
 * when pasted beside the blocks it was copied from. Returns the new ids.
 */
export function paste(diagram, data, offset = 40) {
  const { blocks, links } = copy(data);
  diagram.blocks = diagram.blocks || [];
  const taken = new Set(diagram.blocks.map((b) => b.id));
  const shift = blocks.some((b) => taken.has(b.id)) ? offset : 0;
  const renamed = new Map();
  for (const b of blocks) {
    let id = b.id;
    if (taken.has(id)) {
      const base = id.replace(/\d+$/, '');
      let n = 2;
      while (taken.has(`${base}${n}`)) n++;
      id = `${base}${n}`;
    }
    taken.add(id);
    renamed.set(b.id, id);
  }
  const end = (e) => {
    const [b, p] = splitEnd(e);
    return p === undefined ? renamed.get(b) : `${renamed.get(b)}.${p}`;
  };
  for (const b of blocks) {
    b.id = renamed.get(b.id);
    if (b.layout) b.layout = { ...b.layout, x: num(b.layout.x) + shift, y: num(b.layout.y) + shift };
    diagram.blocks.push(b);
  }
  diagram.links = diagram.links || [];
  for (const l of links) {
    l.from = end(l.from);
    l.to = Array.isArray(l.to) ? l.to.map(end) : end(l.to);
    const points = l.layout?.waypoints;
    if (points) setWaypoints(l, points.map((p) => ({ x: num(p.x) + shift, y: num(p.y) + shift })));
    diagram.links.push(l);
  }
  return blocks.map((b) => b.id);
}

/**
 * Aligns blocks `ids` on one edge or centre line of their bounding box:
 * `how` is left, centre, right, top, middle or bottom; `boxOf(block)`
 * gives `{x, y, width, height}`.
 */
export function align(diagram, ids, how, boxOf) {
  const chosen = (diagram.blocks || []).filter((b) => ids.includes(b.id));
  if (chosen.length < 2) return;
  const boxes = chosen.map(boxOf);
  const left = Math.min(...boxes.map((b) => b.x));
  const right = Math.max(...boxes.map((b) => b.x + b.width));
  const top = Math.min(...boxes.map((b) => b.y));
  const bottom = Math.max(...boxes.map((b) => b.y + b.height));
  chosen.forEach((b, i) => {
    const box = boxes[i];
    const at = { x: box.x, y: box.y };
    if (how === 'left') at.x = left;
    if (how === 'centre') at.x = (left + right) / 2 - box.width / 2;
    if (how === 'right') at.x = right - box.width;
    if (how === 'top') at.y = top;
    if (how === 'middle') at.y = (top + bottom) / 2 - box.height / 2;
    if (how === 'bottom') at.y = bottom - box.height;
    b.layout = { ...(b.layout || {}), x: Math.round(at.x), y: Math.round(at.y) };
  });
}

/** Turns block `b` a quarter clockwise (`rotate`) or mirrors it (`flip`), at position `at` when it has none. */
export function turn(b, how, at) {
  const layout = { x: Math.round(at.x), y: Math.round(at.y), ...(b.layout || {}) };
  if (how === 'rotate') {
    const r = (num(layout.rotation ?? 0) + 90) % 360;
    if (r) layout.rotation = r;
    else delete layout.rotation;
  } else if (layout.flip) delete layout.flip;
  else layout.flip = true;
  b.layout = layout;
}

const ORDER = ['$schema', 'name', 'description', 'blocks', 'links', 'simulation', 'algebraic_loops'];

/** Sets (or with `undefined` removes) top-level member `key` of `doc`, members kept in the format's order. */
export function setMember(doc, key, value) {
  const members = Object.entries(doc).filter(([k]) => k !== key);
  if (value !== undefined) members.push([key, value]);
  const rank = (k) => (ORDER.includes(k) ? ORDER.indexOf(k) : ORDER.length);
  members.sort((a, b) => rank(a[0]) - rank(b[0]));
  for (const k of Object.keys(doc)) delete doc[k];
  for (const [k, v] of members) doc[k] = v;
}

export { parse, stringify };
