// The editor's changes to the document, with undo and redo: each change
// is made on a copy of the newest document (also between a change and
// the render it causes) and kept for undo; another model opened starts a
// history of its own.
import { useCallback, useEffect, useRef, useState } from 'react';
import { copy, diagramAt } from '../model.js';

/**
 * `update(change)` calls `change(diagram, root)` on a copy of `doc` (the
 * diagram at `path` and the whole document) and makes it the model's;
 * `placeOf.current(block)` says where a block the file places nowhere is
 * drawn, fixed by any change.
 */
export function useHistory({ doc, generation, path, setModel, placeOf }) {
  const history = useRef({ undo: [], redo: [] });
  const [, setSteps] = useState(0);
  const latest = useRef(doc);
  useEffect(() => {
    latest.current = doc;
  }, [doc]);

  const update = useCallback(
    (change) => {
      const next = copy(latest.current);
      const here = diagramAt(next, path);
      // A change fixes the drawn place of every block, so that none moves because of another's.
      for (const b of here.blocks || []) if (!b.layout) b.layout = placeOf.current(b);
      change(here, next);
      history.current.undo.push(latest.current);
      history.current.redo = [];
      latest.current = next;
      setSteps((n) => n + 1);
      setModel((m) => ({ ...m, doc: next }));
    },
    [path, setModel],
  );
  // One step back (undo) or forward (redo) through the history.
  const travel = useCallback(
    (from, to) => {
      const doc = from.pop();
      if (!doc) return;
      to.push(latest.current);
      latest.current = doc;
      setSteps((n) => n + 1);
      setModel((m) => ({ ...m, doc }));
    },
    [setModel],
  );
  const undo = useCallback(() => travel(history.current.undo, history.current.redo), [travel]);
  const redo = useCallback(() => travel(history.current.redo, history.current.undo), [travel]);

  useEffect(() => {
    history.current = { undo: [], redo: [] };
    setSteps((n) => n + 1);
  }, [generation]);

  const can = { undo: history.current.undo.length > 0, redo: history.current.redo.length > 0 };
  return { latest, update, undo, redo, can };
}
