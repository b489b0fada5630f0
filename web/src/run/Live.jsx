// The progress of the run under way, apart from the rest of the view,
// which does not render again for it.
import { useEffect, useState } from 'react';
import { Text } from '@radix-ui/themes';

/** The progress of the run under way, from the `progress` events on `bus`. */
export function Live({ bus }) {
  const [progress, setProgress] = useState({ progress: 0, rows: 0 });
  useEffect(() => {
    const update = (e) => setProgress(e.detail);
    bus.addEventListener('progress', update);
    return () => bus.removeEventListener('progress', update);
  }, [bus]);
  return (
    <Text size="1" color="gray" role="status" aria-label="progress">
      {progress.rows.toLocaleString('en')} rows · {(100 * progress.progress).toFixed(0)} %
    </Text>
  );
}
