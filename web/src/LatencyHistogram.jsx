// A latency histogram in SVG: log bins on a logarithmic latency axis,
// counts on a logarithmic axis, the median and 99th percentile marked.
// On the virtual clock latencies are charged, not measured: it says so.
import { useEffect, useRef, useState } from 'react';
import { Flex, SegmentedControl, Text } from '@radix-ui/themes';
import { countTicks, latencyTicks, logBins } from './histogram.js';
import { formatCount, formatNs } from './readout.js';

const HEIGHT = 210;
const MARGIN = { left: 46, right: 26, top: 12, bottom: 40 };
/** The count axis starts below 1, so that a bin of one wake-up shows. */
const FLOOR = Math.log10(0.5);

const WHAT = {
  wake_ns: { title: 'Wake-up latency', counted: 'wake-ups', charged: 'the configured wake_latency' },
  compute_ns: { title: 'Compute time', counted: 'frames', charged: 'the configured fast_cost and implicit_cost' },
};

/** The width of `ref`'s element, following its resizes. */
function useWidth(ref) {
  const [width, setWidth] = useState(0);
  useEffect(() => {
    const observer = new ResizeObserver(([entry]) => setWidth(entry.contentRect.width));
    observer.observe(ref.current);
    return () => observer.disconnect();
  }, [ref]);
  return width;
}

function Plot({ data, counted, width }) {
  const h = logBins(data.histogram);
  const ticks = countTicks(h.top);
  const [w, ph] = [Math.max(100, width - MARGIN.left - MARGIN.right), HEIGHT - MARGIN.top - MARGIN.bottom];
  const x = (ns) => MARGIN.left + ((Math.log10(Math.max(ns, 1)) - h.lo) / (h.hi - h.lo)) * w;
  const top = Math.log10(ticks[ticks.length - 1]);
  const y = (c) => MARGIN.top + ph - ((Math.log10(c) - FLOOR) / (top - FLOOR)) * ph;
  const base = MARGIN.top + ph;
  const marks = [
    ['p50', data.p50],
    ['p99', data.p99],
  ].filter(([, v]) => typeof v === 'number' && v > 0);
  return (
    <svg width={width} height={HEIGHT} className="histogram" role="img" aria-label={`${counted} histogram`} data-testid="histogram">
      {ticks.map((t) => (
        <g key={t}>
          <line className="grid" x1={MARGIN.left} x2={MARGIN.left + w} y1={y(t)} y2={y(t)} />
          <text className="tick" data-testid="histogram-y-tick" x={MARGIN.left - 6} y={y(t)} dy="0.32em" textAnchor="end">
            {formatCount(t)}
          </text>
        </g>
      ))}
      {h.bins.map((b) =>
        b.count > 0 ? (
          <rect key={b.from} className="bin" x={x(b.from) + 0.5} width={Math.max(1, x(b.to) - x(b.from) - 1)} y={y(b.count)} height={base - y(b.count)}>
            <title>{`${formatNs(b.from)} to ${formatNs(b.to)}: ${formatCount(b.count)} ${counted}`}</title>
          </rect>
        ) : null,
      )}
      {marks.map(([name, v], k) => (
        <g key={name} className="mark">
          <line x1={x(v)} x2={x(v)} y1={MARGIN.top} y2={base} />
          <text x={x(v) > MARGIN.left + w - 90 ? x(v) - 3 : x(v) + 3} y={MARGIN.top + 9 + 12 * k} textAnchor={x(v) > MARGIN.left + w - 90 ? 'end' : 'start'}>
            {name} {formatNs(v)}
          </text>
        </g>
      ))}
      <line className="axis" x1={MARGIN.left} x2={MARGIN.left + w} y1={base} y2={base} />
      <line className="axis" x1={MARGIN.left} x2={MARGIN.left} y1={MARGIN.top} y2={base} />
      {latencyTicks(h.lo, h.hi).map((t) => (
        <g key={t}>
          <line className="axis" x1={x(t)} x2={x(t)} y1={base} y2={base + 4} />
          <text className="tick" data-testid="histogram-x-tick" x={x(t)} y={base + 16} textAnchor="middle">
            {formatNs(t)}
          </text>
        </g>
      ))}
      <text className="axis-title" x={MARGIN.left + w / 2} y={HEIGHT - 4} textAnchor="middle" data-testid="histogram-x-title">
        latency (log scale)
      </text>
      <text className="axis-title" transform={`translate(11 ${MARGIN.top + ph / 2}) rotate(-90)`} textAnchor="middle" data-testid="histogram-y-title">
        {counted} (log)
      </text>
    </svg>
  );
}

/** The wake-up latency or compute time histogram of a run's `stats` on its `clock`. */
export function LatencyHistogram({ stats, clock }) {
  const [which, setWhich] = useState('wake_ns');
  const box = useRef(null);
  const width = useWidth(box);
  const data = stats?.[which];
  const what = WHAT[which];
  let body;
  if (clock === 'virtual') {
    body = (
      <Text as="p" size="2" color="gray" data-testid="histogram-virtual">
        On the virtual clock, time is charged, not measured: every one of the {formatCount(data?.count ?? 0)} {what.counted} took{' '}
        {what.charged} ({formatNs(data?.max ?? 0)}
        {data && data.max !== data.p50 ? ` at most, ${formatNs(data.p50)} median` : ''}). Start the run on the real clock to see how{' '}
        {what.title.toLowerCase()} is spread.
      </Text>
    );
  } else if (!data || !logBins(data.histogram)) {
    body = (
      <Text as="p" size="2" color="gray">
        No {what.counted} counted yet.
      </Text>
    );
  } else if (width > 0) {
    body = <Plot data={data} counted={what.counted} width={width} />;
  }
  return (
    <Flex direction="column" gap="2">
      <Flex justify="between" align="center">
        <Text size="2" weight="bold">
          {what.title}
        </Text>
        <SegmentedControl.Root size="1" value={which} onValueChange={setWhich} aria-label="histogram of">
          <SegmentedControl.Item value="wake_ns">wake-up</SegmentedControl.Item>
          <SegmentedControl.Item value="compute_ns">compute</SegmentedControl.Item>
        </SegmentedControl.Root>
      </Flex>
      <div ref={box} className="histogram-box">
        {body}
      </div>
    </Flex>
  );
}
