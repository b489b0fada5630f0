// The Run view's legend, apart from the rest of the view, which does not
// render again for the cursor or the rows streaming in.
import { useEffect, useState } from 'react';
import { Flex, Heading, Text } from '@radix-ui/themes';
import { Legend } from '../Legend.jsx';
import { formatSignal } from '../readout.js';

/**
 * The signals (Legend.jsx): each one's colour, name, unit, whether it is
 * shown, and its value (six digits) in the row under the cursor (`hover`
 * events on `bus`), else in the last row so far (updated on each
 * `progress` event).
 */
export function Signals({ bus, run: r, names, shown, toggle }) {
  const [hover, setHover] = useState(-1);
  const [, setTick] = useState(0);
  useEffect(() => {
    const onHover = (e) => setHover(e.detail);
    let last = 0;
    const onProgress = () => {
      if (performance.now() - last < 500) return;
      last = performance.now();
      setTick((n) => n + 1);
    };
    bus.addEventListener('hover', onHover);
    bus.addEventListener('progress', onProgress);
    return () => {
      bus.removeEventListener('hover', onHover);
      bus.removeEventListener('progress', onProgress);
    };
  }, [bus]);
  const rows = r?.columns.rows ?? 0;
  const row = rows > 0 ? (hover >= 0 && hover < rows ? hover : rows - 1) : -1;
  return (
    <>
      <Flex justify="between" align="baseline" mb="2">
        <Heading size="2">Signals</Heading>
        <Text size="1" color="gray" data-testid="legend-time">
          {row >= 0 ? `t = ${Number(r.columns.data[0][row].toPrecision(6))} s` : ''}
        </Text>
      </Flex>
      {!names && (
        <Text size="1" color="gray">
          The model’s outputs appear here, with their values under the cursor.
        </Text>
      )}
      {names && (
        <Legend
          names={names}
          units={r?.units ?? {}}
          colors={r?.colors?.series ?? []}
          shown={shown}
          toggle={toggle}
          testid="legend"
          value={(c) => (row >= 0 ? formatSignal(r.columns.data[c][row], r.columns.size[c], '', 6) : '—')}
        />
      )}
    </>
  );
}
