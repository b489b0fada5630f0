// The Run view's chart with its head: the run's name, whether it is out
// of date, the zoomed range, and the results as CSV, PNG or SVG.
import { Badge, Button, Card, Flex, Heading, Text } from '@radix-ui/themes';
import { DownloadIcon, ImageIcon, PlayIcon, ResetIcon, TableIcon } from '@radix-ui/react-icons';
import { download, pngOf, svgOf } from '../plot.js';

/** The results of `job` (in `chart`) to save, named after the model. */
function Exports({ job, chart, name }) {
  const { plot, run } = chart;
  const savePng = async () => plot.current && download(await pngOf(plot.current, run.current.colors), `${name}.png`);
  const saveSvg = () => plot.current && download(new Blob([svgOf(plot.current, run.current.colors)], { type: 'image/svg+xml' }), `${name}.svg`);
  return (
    <Flex gap="2" ml="auto">
      {job ? (
        <Button size="1" variant="soft" asChild>
          <a href={`/api/simulations/${job.id}/csv`} download={`${name}.csv`}>
            <TableIcon /> CSV
          </a>
        </Button>
      ) : (
        <Button size="1" variant="soft" disabled>
          <TableIcon /> CSV
        </Button>
      )}
      <Button size="1" variant="soft" onClick={savePng} disabled={!job}>
        <ImageIcon /> PNG
      </Button>
      <Button size="1" variant="soft" onClick={saveSvg} disabled={!job}>
        <DownloadIcon /> SVG
      </Button>
    </Flex>
  );
}

/** The chart (useChart.js) of `job`, a run of the model `doc`. */
export function ChartCard({ job, doc, stale, chart }) {
  const { zoom, resetZoom } = chart;
  const name = String(doc.name ?? 'model').replace(/[^A-Za-z0-9_-]+/g, '_');
  return (
    <Card className="run-chart-card" size="1">
      <Flex className="run-chart-head" align="center" gap="2">
        <Heading size="2" className="run-title">
          {job ? job.name || doc.name : 'Outputs'}
        </Heading>
        {stale && (
          <Badge color="amber" variant="soft" data-testid="run-stale">
            previous run {job.id}: out of date, the last Run failed
          </Badge>
        )}
        {zoom && (
          <Badge variant="soft" color="indigo">
            {Number(zoom[0].toPrecision(4))} – {Number(zoom[1].toPrecision(4))} s
          </Badge>
        )}
        {zoom && (
          <Button size="1" variant="ghost" onClick={resetZoom}>
            <ResetIcon /> Reset zoom
          </Button>
        )}
        <Exports job={job} chart={chart} name={name} />
      </Flex>
      <div className="run-chart-area">
        <div ref={chart.box} className="run-chart" data-testid="chart" />
        {!job && (
          <Flex className="run-empty" direction="column" align="center" justify="center" gap="2">
            <PlayIcon width="28" height="28" />
            <Text size="2">Run the model to plot its outputs</Text>
            <Text size="1" color="gray">
              <kbd>Ctrl</kbd>+<kbd>Enter</kbd> runs it; drag on the chart to zoom, double-click to see it all
            </Text>
          </Flex>
        )}
      </div>
    </Card>
  );
}
