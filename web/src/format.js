// Model files as text and back: numbers keep the literal they were written
// with (15.0 stays 15.0), members keep their order, and a file is written
// in the style it was read in: "pretty" (two-space JSON) or "compact" (the
// examples' one block per line). Saving a loaded file unchanged gives its
// bytes back, apart from the `layout` members the editor adds.
import { parse, stringify } from 'lossless-json';

/** Parses a model file's text, keeping number literals. */
export function parseModel(text) {
  return parse(text);
}

/** One value on one line, with `": "` and `", "` separators. */
function inline(value) {
  if (Array.isArray(value)) return '[' + value.map(inline).join(', ') + ']';
  if (value !== null && typeof value === 'object' && !value.isLosslessNumber) {
    const members = Object.entries(value).map(([k, v]) => JSON.stringify(k) + ': ' + inline(v));
    return '{' + members.join(', ') + '}';
  }
  return stringify(value);
}

/** Elements of `blocks` or `links` one per line at `indent`. */
function compactList(items, indent) {
  return '[\n' + items.map((item) => indent + '  ' + compactItem(item, indent + '  ')).join(',\n') + '\n' + indent + ']';
}

/**
 * A block or link on one line; a subsystem on several: its own members on
 * its first line, then its `blocks` and `links` one element per line.
 */
function compactItem(item, indent) {
  if (!item || typeof item !== 'object' || !Array.isArray(item.blocks)) return inline(item);
  const nested = ['blocks', 'links'].filter((k) => Array.isArray(item[k]));
  const own = Object.entries(item).filter(([k]) => !nested.includes(k));
  const inner = indent + '  ';
  const lines = [inner + own.map(([k, v]) => JSON.stringify(k) + ': ' + inline(v)).join(', ')];
  for (const key of nested) lines.push(inner + JSON.stringify(key) + ': ' + compactList(item[key], inner));
  return '{\n' + lines.join(',\n') + '\n' + indent + '}';
}

/** The compact style: top-level members one per line, `blocks` and `links` one element per line. */
export function compact(doc) {
  const members = Object.entries(doc).map(([key, value]) => {
    const head = '  ' + JSON.stringify(key) + ': ';
    if ((key === 'blocks' || key === 'links') && Array.isArray(value) && value.length > 0) {
      return head + compactList(value, '  ');
    }
    return head + inline(value);
  });
  return '{\n' + members.join(',\n') + '\n}\n';
}

/** The pretty style: two-space indented JSON. */
export function pretty(doc) {
  return stringify(doc, null, 2) + '\n';
}

const STYLES = { pretty, compact };

/** A copy of `doc` without any block's `layout`. */
export function withoutLayout(doc) {
  const strip = (blocks) =>
    blocks.map((b) => {
      const { layout, ...rest } = b;
      if (Array.isArray(rest.blocks)) rest.blocks = strip(rest.blocks);
      return rest;
    });
  const copy = { ...doc };
  if (Array.isArray(copy.blocks)) copy.blocks = strip(copy.blocks);
  return copy;
}

/** The style that writes `text` back byte for byte (layouts aside), else pretty. */
export function detectStyle(text) {
  const doc = withoutLayout(parseModel(text));
  for (const [name, write] of Object.entries(STYLES)) {
    if (write(doc) === text || write(doc) === text + '\n') return name;
  }
  return 'pretty';
}

/** `doc` as a file in `style`. */
export function serialize(doc, style = 'pretty') {
  return (STYLES[style] || pretty)(doc);
}
