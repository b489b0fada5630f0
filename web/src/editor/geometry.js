// A block's drawing: its size from its ports' labels and its text, and
// where each port sits once the block is turned (`rotation`, clockwise)
// and mirrored (`flip`). Pure, so the layout and the canvas agree.
import { num } from '../model.js';

const PORT_PITCH = 22;
const CHAR = { id: 7.4, type: 6.2, port: 6.2 };

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
  const text = Math.max(block.id.length * CHAR.id, block.type.length * CHAR.type) + 52;
  const label = (names) => (names.length ? longest(names) * CHAR.port + 14 : 6);
  const most = Math.max(inputs.length, outputs.length, 1);
  const { rotation } = orientation(block);
  if (rotation % 180 === 0) {
    return {
      width: Math.round(Math.max(120, label(inputs) + label(outputs) + text)),
      height: Math.max(56, PORT_PITCH * most + 18),
    };
  }
  const across = Math.max(longest(inputs), longest(outputs)) * CHAR.port + 12;
  return {
    width: Math.round(Math.max(text, most * Math.max(across, PORT_PITCH) + 12)),
    height: 56 + (inputs.length ? 16 : 0) + (outputs.length ? 16 : 0),
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
