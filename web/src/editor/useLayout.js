// Where the blocks of the diagram shown are drawn, and how large.
import { useCallback, useMemo } from 'react';
import { layered, num } from '../model.js';
import { blockSize } from './geometry.js';

/**
 * `sizeOf(block)` and `positionOf(block)`: its own layout, or for blocks
 * the file places nowhere, a layout along the links.
 */
export function useLayout(diagram, ports) {
  const sizeOf = useCallback((b) => blockSize(b, ports[b.id]), [ports]);
  const auto = useMemo(
    () => ((diagram.blocks || []).every((b) => b.layout) ? {} : layered(diagram, sizeOf)),
    [diagram, sizeOf],
  );
  const positionOf = useCallback(
    (b) => (b.layout ? { x: num(b.layout.x), y: num(b.layout.y) } : auto[b.id] || { x: 0, y: 0 }),
    [auto],
  );
  return { sizeOf, positionOf };
}
