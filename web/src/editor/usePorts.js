// Each block's ports, from the server, for its type and parameters.
import { useEffect, useRef, useState } from 'react';
import { api } from '../api.js';
import { stringify } from '../model.js';

/** A block's definition without its layout: what its ports depend on. */
export const portsKey = (b) => {
  const { layout, ...def } = b;
  return stringify(def);
};

/**
 * `[ports, setPorts]`, by block id, for the blocks of `diagram`: asked
 * once per block and key; a reply for a key asked before a newer one is
 * dropped.
 */
export function usePorts(diagram) {
  const [ports, setPorts] = useState({});
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
  return [ports, setPorts];
}
