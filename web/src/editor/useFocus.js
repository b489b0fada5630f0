// A block another view names (a Run's error): its diagram opened and the
// block selected (useViewport.js brings it into view).
import { useEffect } from 'react';

/** Follows `focus` (`{block}`, a path of ids, a new object each time). */
export function useFocus({ focus, path, setPath, selectNext, selectOnly }) {
  useEffect(() => {
    if (!focus?.block) return;
    const inside = focus.block.split('/');
    const id = inside.pop();
    if (inside.join('/') !== path.join('/')) {
      selectNext([id]);
      setPath(inside);
    } else selectOnly(id);
  }, [focus]);
}
