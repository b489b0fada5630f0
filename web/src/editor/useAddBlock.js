// Blocks added from the palette: dropped on the canvas, or (double-click,
// Enter) at the free place nearest the middle of the view.
import { api } from '../api.js';
import { diagramAt, newBlock } from '../model.js';
import { blockSize, freeSpot } from './geometry.js';
import { portsKey } from './usePorts.js';

/** `add`, `onDrop` (the canvas's) and `addInView` (the palette's). */
export function useAddBlock({ flow, canvasRef, history, path, library, generationRef, ports, setPorts, placeOf, selectNext, selectNone }) {
  const { latest, update } = history;
  // A new block of `type` centred on `at` (flow coordinates), or at the
  // free place nearest it when `free`, selected; `also(diagram, block)`
  // is done in the same step (a link to it).
  const add = async (type, at, free = false, also = () => {}) => {
    // Nothing stays selected (nor its form shown) while the new block's ports are asked for.
    selectNone();
    const opening = generationRef.current;
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
    selectNext([block.id]);
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
  const addInView = (type) => {
    const box = canvasRef.current.querySelector('.react-flow').getBoundingClientRect();
    add(type, flow.screenToFlowPosition({ x: box.x + box.width / 2, y: box.y + box.height / 2 }), true);
  };
  return { add, onDrop, addInView };
}
