// Ctrl+Enter runs, while the Run view is shown, also from its fields.
import { useEffect, useRef } from 'react';

/** Calls the newest `start` on Ctrl+Enter (or ⌘+Enter) while `active`. */
export function useRunKey(active, start) {
  const startRef = useRef(start);
  startRef.current = start;
  useEffect(() => {
    if (!active) return undefined;
    const key = (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        startRef.current();
      }
    };
    window.addEventListener('keydown', key);
    return () => window.removeEventListener('keydown', key);
  }, [active]);
}
