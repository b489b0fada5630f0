// A message that goes away by itself.
import { useEffect, useState } from 'react';

/** `[text, setText]`: a text set is emptied again `ms` milliseconds later. */
export function useFading(ms) {
  const [text, setText] = useState('');
  useEffect(() => {
    if (!text) return undefined;
    const timer = setTimeout(() => setText(''), ms);
    return () => clearTimeout(timer);
  }, [text, ms]);
  return [text, setText];
}
