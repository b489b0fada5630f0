// The server's check of the model being edited.
import { useEffect, useState } from 'react';
import { api } from '../api.js';
import { describeError } from './errors.js';

/**
 * The check of the model's text `text`, a moment after each change: null
 * when it passes, else the error in words and the block, port and kind
 * it names; a reply about a text changed since is dropped.
 */
export function useCheck(text) {
  const [check, setCheck] = useState(null);
  useEffect(() => {
    let current = true;
    const timer = setTimeout(async () => {
      const r = await api('POST', '/api/check', text);
      if (!current) return;
      const place = r.json?.place || {};
      setCheck(r.ok ? null : { message: describeError(r.json || { error: r.text }), block: place.block, port: place.port, kind: r.json?.kind });
    }, 300);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [text]);
  return check;
}
