// The editor's keyboard shortcuts, while it is shown and nothing else
// (a field, a dialog, a menu) has the keys.
import { useEffect } from 'react';
import { isTyping } from '../shortcuts.js';

/** `act`: undo, redo, selectAll, copy, paste, rotate, flip, layOut, search, remove. */
export function useShortcuts(active, act) {
  useEffect(() => {
    if (!active) return undefined;
    const key = (e) => {
      if (isTyping(e) || e.defaultPrevented || document.querySelector('[role="dialog"], [role="alertdialog"], [role="menu"]')) return;
      const mod = e.ctrlKey || e.metaKey;
      const plain = !mod && !e.altKey;
      const action = {
        z: mod && (e.shiftKey ? act.redo : act.undo),
        y: mod && act.redo,
        a: mod && act.selectAll,
        c: mod && !window.getSelection()?.toString() && act.copy,
        v: mod && act.paste,
        r: plain && act.rotate,
        f: plain && act.flip,
        l: plain && act.layOut,
        '/': !mod && act.search,
        delete: !mod && act.remove,
        backspace: !mod && act.remove,
      }[e.key.toLowerCase()];
      if (!action) return;
      e.preventDefault();
      action();
    };
    window.addEventListener('keydown', key);
    return () => window.removeEventListener('keydown', key);
  });
}
