// react-style-singleton's API (used by the scroll lock of Radix's dialogs)
// with the styles in a constructed style sheet adopted by the document
// instead of an inline <style> element, which the page's content security
// policy (style-src 'self') refuses. vite.config.js puts it in the
// package's place.
import { useEffect } from 'react';

/** A style sheet added by the first `add` and removed by the last `remove`. */
export function stylesheetSingleton() {
  let counter = 0;
  let sheet = null;
  return {
    add(style) {
      if (counter === 0 && typeof document !== 'undefined') {
        sheet = new CSSStyleSheet();
        sheet.replaceSync(style);
        document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
      }
      counter++;
    },
    remove() {
      counter--;
      if (counter === 0 && sheet) {
        document.adoptedStyleSheets = document.adoptedStyleSheets.filter((s) => s !== sheet);
        sheet = null;
      }
    },
  };
}

/** A hook that holds `styles` while a component using it is mounted. */
export function styleHookSingleton() {
  const sheet = stylesheetSingleton();
  return (styles, isDynamic) => {
    useEffect(() => {
      sheet.add(styles);
      return () => sheet.remove();
    }, [styles && isDynamic]);
  };
}

/** A component that holds its `styles` while it is mounted. */
export function styleSingleton() {
  const useStyle = styleHookSingleton();
  return function Sheet({ styles, dynamic }) {
    useStyle(styles, dynamic);
    return null;
  };
}
