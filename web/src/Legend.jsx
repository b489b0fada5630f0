// The signals of a chart, listed beside it: each one's colour, name, unit
// and value (the Run view's and the dashboard's chart), with a box that
// shows or hides it when the chart can.
import { Checkbox, Text } from '@radix-ui/themes';
import { unitOf } from './plot.js';
import './legend.css';

/**
 * `names`: the chart's columns, time first; `units` by column name (none
 * when each value carries its own);
 * `colors`: the series' colours in order; `value(c)`: the text of column
 * `c`'s value; `shown` and `toggle(c)`, when given, a box per signal;
 * `testid`: the prefix of each value's test id.
 */
export function Legend({ names, units, colors, value, shown, toggle, testid }) {
  return (
    <div className="run-legend" role="list" aria-label="legend">
      {names.slice(1).map((n, i) => {
        const on = !shown || shown.includes(i + 1);
        return (
          <label key={n} className="run-legend-row" role="listitem" data-off={!on || undefined} data-box={toggle ? true : undefined}>
            {toggle && <Checkbox size="1" aria-label={`show ${n}`} checked={on} onCheckedChange={() => toggle(i + 1)} />}
            <span className="run-swatch" style={{ background: colors[i % colors.length] }} />
            <Text size="2" className="run-legend-name" truncate title={n}>
              {n}
            </Text>
            <Text size="1" color="gray">
              {units && unitOf(units, n)}
            </Text>
            <Text size="2" className="run-legend-value" data-testid={`${testid}-${n}`}>
              {value(i + 1)}
            </Text>
          </label>
        );
      })}
    </div>
  );
}
