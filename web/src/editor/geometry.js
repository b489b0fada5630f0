// A block's drawing: its size from its ports' labels and its text, and
// where each port sits once the block is turned (`rotation`, clockwise)
// and mirrored (`flip`). Pure, so the layout and the canvas agree.
import { num } from '../model.js';
import { faceOf } from './face.js';

const PORT_PITCH = 22;
// Widths of a character of the block's id (13 px, bold), type (11 px), face and port labels (monospace, 12 and 11 px).
const CHAR = { id: 8.2, type: 6.6, face: 7.4, port: 6.8 };

/** The turn (0, 90, 180, 270) and mirror of a block's layout. */
export function orientation(block) {
  const r = num(block.layout?.rotation ?? 0);
  return { rotation: [0, 90, 180, 270].includes(r) ? r : 0, flip: block.layout?.flip === true };
}

const longest = (names) => Math.max(0, ...names.map((n) => String(n).length));

/** `{width, height}` of `block` drawn with `ports` (`{inputs, outputs}`), labels inside. */
export function blockSize(block, ports) {
  const inputs = ports?.inputs || [];
  const outputs = ports?.outputs || [];
  // The text beside its glyph (24 px and a gap of 8), with padding.
  const text = Math.max(block.id.length * CHAR.id, block.type.length * CHAR.type, faceOf(block).length * CHAR.face) + 52;
  const label = (names) => (names.length ? longest(names) * CHAR.port + 14 : 6);
  const most = Math.max(inputs.length, outputs.length, 1);
  const { rotation } = orientation(block);
  if (rotation % 180 === 0) {
    return {
      width: Math.round(Math.max(120, label(inputs) + label(outputs) + text)),
      height: Math.max(faceOf(block) ? 64 : 56, PORT_PITCH * most + 18),
    };
  }
  const across = Math.max(longest(inputs), longest(outputs)) * CHAR.port + 12;
  return {
    width: Math.round(Math.max(text, most * Math.max(across, PORT_PITCH) + 12)),
    height: (faceOf(block) ? 64 : 56) + (inputs.length ? 16 : 0) + (outputs.length ? 16 : 0),
  };
}

/**
 * Where each port sits: `{name, kind, side, at}` with `side` one of left,
 * right, top, bottom and `at` the fraction along it. Inputs are on the
 * left and outputs on the right of an unturned block; `flip` mirrors left
 * and right, then `rotation` turns the block clockwise.
 */
export function portPlaces(block, ports) {
  const { rotation, flip } = orientation(block);
  const place = (names, kind) =>
    names.map((name, i) => {
      let x = kind === 'in' ? 0 : 1;
      let y = (i + 1) / (names.length + 1);
      if (flip) x = 1 - x;
      for (let r = 0; r < rotation; r += 90) [x, y] = [1 - y, x];
      const side = x === 0 ? 'left' : x === 1 ? 'right' : y === 0 ? 'top' : 'bottom';
      return { name, kind, side, at: side === 'left' || side === 'right' ? y : x };
    });
  return [...place(ports?.inputs || [], 'in'), ...place(ports?.outputs || [], 'out')];
}

/** How far a link routed around blocks keeps from them (px). */
const CLEARANCE = 18;

/**
 * A link that runs back (its input left of its output, a feedback) routed
 * around the blocks (`boxes`, `{x, y, width, height}`) it would cross:
 * out of the output to the right, along a horizontal line above or below
 * them, whichever is the shorter way, and into the input from the left.
 * The blocks crossed are those the step it would otherwise be drawn as
 * crosses (back half way between its ends' heights), and those the line
 * would then cross. The points, or null for a link that runs forward or
 * crosses no block.
 */
export function feedbackRoute(boxes, from, to) {
  if (to.x > from.x + 2 * CLEARANCE) return null;
  const [left, right] = [to.x - CLEARANCE, from.x + CLEARANCE];
  const within = boxes.filter((b) => b.x < right && b.x + b.width > left);
  const crosses = (b, y0, y1) => b.y < Math.max(y0, y1) && b.y + b.height > Math.min(y0, y1);
  // Drawn as a step, the link would run back half way between its ends' heights.
  const middle = (from.y + to.y) / 2;
  let crossed = within.filter((b) => b.y < middle && b.y + b.height > middle);
  if (crossed.length === 0) return null;
  let y;
  for (let round = 0; round < 8; round++) {
    const top = Math.min(...crossed.map((b) => b.y)) - CLEARANCE;
    const bottom = Math.max(...crossed.map((b) => b.y + b.height)) + CLEARANCE;
    const cost = (v) => Math.abs(from.y - v) + Math.abs(to.y - v);
    y = cost(bottom) <= cost(top) ? bottom : top;
    const more = within.filter((b) => !crossed.includes(b) && crosses(b, from.y, y) + crosses(b, to.y, y) > 0);
    if (more.length === 0) break;
    crossed = crossed.concat(more);
  }
  return [from, { x: right, y: from.y }, { x: right, y }, { x: left, y }, { x: left, y: to.y }, to];
}

/** The room kept free around a block placed from the palette (px). */
const ROOM = 24;

/**
 * Where a block of `size` goes near `at` (its wished centre) without
 * touching any of `boxes`: the nearest free place on rings of a grid
 * around `at`; its top left corner.
 */
export function freeSpot(boxes, size, at) {
  const step = { x: size.width + ROOM, y: size.height + ROOM };
  const free = (x, y) =>
    boxes.every((b) => x + size.width + ROOM <= b.x || b.x + b.width + ROOM <= x || y + size.height + ROOM <= b.y || b.y + b.height + ROOM <= y);
  const origin = { x: Math.round(at.x - size.width / 2), y: Math.round(at.y - size.height / 2) };
  for (let ring = 0; ring < 50; ring++) {
    const places = [];
    for (let i = -ring; i <= ring; i++)
      for (let j = -ring; j <= ring; j++) if (Math.max(Math.abs(i), Math.abs(j)) === ring) places.push({ x: origin.x + i * step.x, y: origin.y + j * step.y });
    places.sort((a, b) => Math.hypot(a.x - origin.x, a.y - origin.y) - Math.hypot(b.x - origin.x, b.y - origin.y));
    const found = places.find((p) => free(p.x, p.y));
    if (found) return found;
  }
  return origin;
}
