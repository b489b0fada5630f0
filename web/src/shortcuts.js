// The page's keyboard shortcuts, as the help panel lists them. Each view
// handles its own; `isTyping` keeps them out of text fields.

/** The shortcuts, grouped by where they act. `keys` as shown to the user. */
export const SHORTCUTS = [
  { group: 'Page', keys: 'Ctrl+S', action: 'Save the model (asks before overwriting another file)' },
  { group: 'Page', keys: 'Alt+1 / Alt+2 / Alt+3', action: 'Editor / Run / Dashboard' },
  { group: 'Page', keys: '?', action: 'This help' },
  { group: 'Editor', keys: 'Ctrl+Z / Ctrl+Shift+Z (Ctrl+Y)', action: 'Undo / redo' },
  { group: 'Editor', keys: 'Ctrl+A', action: 'Select every block' },
  { group: 'Editor', keys: 'Ctrl+C / Ctrl+V', action: 'Copy / paste the selected blocks and the links between them (also into another model)' },
  { group: 'Editor', keys: 'Delete / Backspace', action: 'Delete the selection' },
  { group: 'Editor', keys: 'Shift+click, Shift+drag', action: 'Add to the selection, select in a rectangle' },
  { group: 'Editor', keys: 'R / F', action: 'Rotate / flip the selected blocks' },
  { group: 'Editor', keys: 'L', action: 'Lay the diagram out left to right' },
  { group: 'Editor', keys: '/', action: 'Search the palette' },
  { group: 'Editor', keys: 'Double-click a link', action: 'Bend it there; drag a selected link\'s dots to move or add bends, double-click one to remove it' },
  { group: 'Editor', keys: 'Double-click a subsystem', action: 'Open it (the path above the canvas leads back)' },
  { group: 'Run', keys: 'Ctrl+Enter', action: 'Run the model' },
];

/** Whether a key event was typed into a text field (no shortcut then). */
export function isTyping(event) {
  const t = event.target;
  return t instanceof HTMLElement && (t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName));
}
