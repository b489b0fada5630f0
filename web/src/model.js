// Editing a model document (the parsed file): the diagram at a subsystem
// path, links from ports and back, and new blocks with valid parameters.
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

/** Positions for blocks without a layout: layers from left to right along the links. */
export function autoLayout(diagram) {
  const blocks = diagram.blocks || [];
  const level = new Map(blocks.map((b) => [b.id, 0]));
  const edges = (diagram.links || []).flatMap((l) => targets(l).map((t) => [splitEnd(l.from)[0], splitEnd(t)[0]]));
  for (let round = 0; round < blocks.length; round++) {
    let moved = false;
    for (const [a, b] of edges) {
      if (level.has(a) && level.has(b) && level.get(b) < level.get(a) + 1 && level.get(a) + 1 < blocks.length) {
        level.set(b, level.get(a) + 1);
        moved = true;
      }
    }
    if (!moved) break;
  }
  const rows = new Map();
  const placed = {};
  for (const b of blocks) {
    const l = level.get(b.id);
    const row = rows.get(l) || 0;
    rows.set(l, row + 1);
    placed[b.id] = { x: 40 + 200 * l, y: 40 + 110 * row };
  }
  return placed;
}

/** A number from a literal or a number. */
export function num(v) {
  return typeof v === 'number' ? v : Number(String(v));
}

export { parse, stringify };
