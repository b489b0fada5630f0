// The state the views share, in one small store: the model being edited
// (the header opens and saves it, the editor changes it, the Run view runs
// it) and the view shown, with a block another view names (a Run's
// error) for the editor to show. A component reads it with `useStore`
// and renders again when what it reads changes.
import { useSyncExternalStore } from 'react';
import { serialize } from './format.js';

/** A value and who listens to it: `get()`, `set(value or change(value))`, `subscribe(listener)`. */
export function createStore(initial) {
  let value = initial;
  const listeners = new Set();
  return {
    get: () => value,
    set: (next) => {
      const v = typeof next === 'function' ? next(value) : next;
      if (Object.is(v, value)) return;
      value = v;
      for (const listener of listeners) listener();
    },
    subscribe: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/** The value of `store`, rendering again when it changes. */
export const useStore = (store) => useSyncExternalStore(store.subscribe, store.get);

/**
 * A model being edited: its document, its file's style and path, the
 * text last opened or saved (unsaved changes differ from it), and which
 * opening this is (the editor's history starts again on each).
 */
export function opened(doc, style, file, generation) {
  return { doc, style, file, saved: serialize(doc, style), generation };
}

export const EMPTY_DOC = { name: 'untitled', blocks: [], links: [] };

/** The model being edited. */
export const modelStore = createStore(opened(EMPTY_DOC, 'pretty', '', 0));

/** The view shown: 'editor', 'run' or 'dashboard'. */
export const viewStore = createStore('editor');

/** A block another view names, `{block, port}` (a new object each time), to be shown in the editor. */
export const focusStore = createStore(null);

/** Shows the block `place` names in the editor. */
export function showBlock(place) {
  focusStore.set({ block: place.block, port: place.port });
  viewStore.set('editor');
}

let lastText = { doc: null, style: null, text: '' };
/**
 * The text of model `m`, made once per change: the editor's check sends
 * it, and it differs from the text last opened or saved while unsaved.
 */
export function textOf(m) {
  if (m.doc !== lastText.doc || m.style !== lastText.style) lastText = { doc: m.doc, style: m.style, text: serialize(m.doc, m.style) };
  return lastText.text;
}
