// Copying the selected blocks (with the links between them) and pasting
// them: through the system clipboard, or the page's own where that cannot
// be read or written.
import { clip, copy, diagramAt, paste, readClip } from '../model.js';

/** What was copied last, for when the system clipboard cannot be read or written. */
let pageClipboard = '';

const blocks = (n) => `${n} block${n > 1 ? 's' : ''}`;

/**
 * `copySelection` and `pasteClipboard` on the diagram at `path` of the
 * newest document (`latest`); each says what it did with `setNote`.
 */
export function useClipboard({ ids, latest, path, positionOf, update, selectNext, setNote }) {
  const copySelection = async () => {
    if (!ids.length) return;
    // Blocks the file places nowhere are copied where they are drawn.
    const here = copy(diagramAt(latest.current, path));
    for (const b of here.blocks || []) if (!b.layout) b.layout = positionOf(b);
    const data = clip(here, ids);
    pageClipboard = data;
    try {
      await navigator.clipboard.writeText(data);
      setNote(`Copied ${blocks(ids.length)}`);
    } catch {
      setNote(`Copied ${blocks(ids.length)} (in this page only)`);
    }
  };
  const pasteClipboard = async () => {
    let data = null;
    try {
      data = readClip(await navigator.clipboard.readText());
    } catch {
      data = null;
    }
    data = data || readClip(pageClipboard);
    if (!data) return setNote('Nothing to paste: copy blocks first');
    let pasted = [];
    update((d) => {
      pasted = paste(d, data);
    });
    selectNext(pasted);
    setNote(`Pasted ${blocks(pasted.length)}`);
  };
  return { copySelection, pasteClipboard };
}
