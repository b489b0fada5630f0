// The Run view in a real browser, against the server's own CSV: the axes
// (titles, units, one per unit), the legend's values under the cursor, the
// exported CSV, PNG and SVG, the solver options, the envelope the chart
// holds of a sine and the rows it holds once zoomed in, the view kept and
// fitted again after another view was shown, and errors.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { browser, root, serve, shot } from './support.mjs';

// Two outputs of one unit: a sine of amplitude 2.5 at 10 Hz, and half of it.
const AMPLITUDE = 2.5;
const SINES = {
  name: 'Sines',
  blocks: [
    { id: 's', type: 'Sine', params: { amplitude: AMPLITUDE, frequency: 20 * Math.PI } },
    { id: 'g', type: 'Gain', params: { gain: 0.5 } },
    { id: 'y', type: 'Output', params: { unit: 'V' } },
    { id: 'z', type: 'Output', params: { unit: 'V' } },
  ],
  links: [
    { from: 's', to: ['y', 'g'] },
    { from: 'g', to: 'z' },
  ],
  simulation: { solver: 'rk4', step: 0.001, stop: 200 },
};

// A Sum whose second input is not linked: a model error at block `sum`, port 2.
const UNWIRED = {
  name: 'Unwired',
  blocks: [
    { id: 'c', type: 'Constant', params: { value: 1 }, layout: { x: 0, y: 0 } },
    { id: 'sum', type: 'Sum', params: { signs: '+-' }, layout: { x: 200, y: 0 } },
    { id: 'y', type: 'Output', layout: { x: 400, y: 0 } },
  ],
  links: [
    { from: 'c', to: 'sum.1' },
    { from: 'sum', to: 'y' },
  ],
  simulation: { solver: 'rk4', step: 0.01, stop: 1 },
};

const shared = {};
before(async () => {
  const folder = mkdtempSync(join(tmpdir(), 'tandem-run-'));
  mkdirSync(join(folder, 'models/examples'), { recursive: true });
  copyFileSync(join(root, 'models/examples/cruise_control.json'), join(folder, 'models/examples/cruise_control.json'));
  copyFileSync(join(root, 'models/examples/ev_speed_controller.json'), join(folder, 'models/examples/ev_speed_controller.json'));
  writeFileSync(join(folder, 'models/examples/sines.json'), JSON.stringify(SINES, null, 2));
  writeFileSync(join(folder, 'models/examples/unwired.json'), JSON.stringify(UNWIRED, null, 2));
  shared.server = await serve(folder);
  Object.assign(shared, await browser(1400, 900));
});
after(async () => {
  await shared.browser?.close();
  shared.server?.stop();
  assert.deepEqual(shared.violations, [], 'the content security policy blocked part of the page');
});

/** Opens `file` and shows the Run view. */
async function open(file, block) {
  const { page, server } = shared;
  await page.goto(server.url);
  await page.getByLabel('open model').selectOption(file);
  await page.getByTestId(`block-${block}`).waitFor();
  await page.getByRole('tab', { name: 'Run' }).click();
}

/** Presses Run and waits for the run's last row to be drawn; resolves to its id. */
async function run() {
  const { page } = shared;
  const state = page.getByTestId('run-state');
  const previous = await state.getAttribute('data-run');
  await page.getByRole('button', { name: 'Run' }).click();
  await page.locator(`[data-testid="run-state"][data-plotted-ms]:not([data-run="${previous}"])`).waitFor({ timeout: 30000 });
  assert.match(await state.textContent(), /done/);
  return state.getAttribute('data-run');
}

/** The server's CSV of run `id`: its text, and its rows as numbers. */
async function csv(id) {
  const text = await (await fetch(`${shared.server.url}/api/simulations/${id}/csv`)).text();
  const [head, ...lines] = text.trim().split('\n');
  return { text, names: head.split(','), rows: lines.map((l) => l.split(',').map(Number)) };
}

/** What the chart holds: its data, axes, series and plot area. */
const held = () =>
  shared.page.evaluate(() => {
    const u = document.querySelector('[data-testid="chart"]').uplot;
    return {
      data: u.data.map((d) => Array.from(d)),
      axes: u.axes.map((a) => ({ scale: a.scale, label: a.label, side: a.side })),
      series: u.series.map((s) => ({ label: s.label, scale: s.scale, show: s.show })),
      width: u.width,
      height: u.height,
      canvas: [u.ctx.canvas.width, u.ctx.canvas.height],
      ratio: devicePixelRatio,
    };
  });

/** The file a click on `button` downloads: its name and bytes. */
async function downloaded(button) {
  const [download] = await Promise.all([shared.page.waitForEvent('download'), button.click()]);
  return { name: download.suggestedFilename(), bytes: readFileSync(await download.path()) };
}

test('axes are titled with their signals and units, one y axis per unit', async () => {
  const { page } = shared;
  await open('cruise_control.json', 'vehicle');
  await page.getByLabel('stop').fill('100');
  await run();
  const chart = await held();
  assert.deepEqual(
    chart.axes.map((a) => a.label),
    ['time [s]', 'v, v_ref [m/s]', 'force [N]'],
  );
  assert.notEqual(chart.axes[1].side, chart.axes[2].side, 'the two units’ axes are on either side');
  assert.deepEqual(
    chart.series.slice(1).map((s) => s.scale),
    [chart.axes[1].scale, chart.axes[1].scale, chart.axes[2].scale],
    'each series is drawn on its unit’s axis',
  );
  await shot(page, 'run-cruise');

  await open('sines.json', 's');
  await page.getByLabel('stop').fill('2');
  await run();
  const one = await held();
  assert.deepEqual(
    one.axes.map((a) => a.label),
    ['time [s]', 'y, z [V]'],
    'two outputs of one unit share one axis',
  );
});

test('the legend shows the values of the row under the cursor, as the CSV has them', async () => {
  const { page } = shared;
  await open('cruise_control.json', 'vehicle');
  await page.getByLabel('step').fill('0.01');
  await page.getByLabel('stop').fill('100');
  const id = await run();
  const { names, rows } = await csv(id);
  const over = await page.locator('[data-testid="chart"] .u-over').boundingBox();
  const seen = [];
  for (const at of [0.2, 0.55, 0.9]) {
    const x = over.x + over.width * at;
    await page.mouse.move(x, over.y + over.height / 2);
    const expected = at * 100; // the time axis spans the run, 0 to 100 s
    await page.waitForFunction((t) => {
      const text = document.querySelector('[data-testid="legend-time"]').textContent;
      return Math.abs(Number(text.match(/t = ([-0-9.e]+)/)?.[1]) - t) < 0.5;
    }, expected);
    const t = Number((await page.getByTestId('legend-time').textContent()).match(/t = ([-0-9.e]+) s/)[1]);
    assert.ok(Math.abs(t - expected) <= 100 / over.width + 0.01, `the cursor at ${expected} s reads ${t} s`);
    const row = rows.reduce((best, r) => (Math.abs(r[0] - t) < Math.abs(best[0] - t) ? r : best));
    const values = {};
    for (const n of ['v', 'v_ref', 'force']) {
      values[n] = Number(await page.getByTestId(`legend-${n}`).textContent());
      const truth = row[names.indexOf(n)];
      assert.ok(Math.abs(values[n] - truth) <= 5e-6 * Math.abs(truth), `${n} at ${t} s: legend ${values[n]}, CSV ${truth}`);
    }
    seen.push(values.v);
  }
  assert.ok(seen[0] < seen[1] && seen[1] < seen[2], `the speed read under the cursor rises as it moves right: ${seen}`);
});

test('CSV, PNG and SVG exports: the server’s rows, a PNG of the chart, an SVG of its shown series', async () => {
  const { page } = shared;
  await open('cruise_control.json', 'vehicle');
  await page.getByLabel('step').fill('0.01');
  await page.getByLabel('stop').fill('50');
  const id = await run();

  const file = await downloaded(page.getByRole('link', { name: 'CSV' }));
  assert.match(file.name, /\.csv$/);
  assert.equal(file.bytes.toString('utf8'), (await csv(id)).text, 'the CSV button gives the server’s CSV byte for byte');

  const png = await downloaded(page.getByRole('button', { name: 'PNG' }));
  const chart = await held();
  assert.deepEqual([...png.bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG signature');
  assert.equal(png.bytes.toString('latin1', 12, 16), 'IHDR');
  assert.deepEqual([png.bytes.readUInt32BE(16), png.bytes.readUInt32BE(20)], chart.canvas, 'the size of the chart’s canvas');

  const svg = async () => {
    const { bytes } = await downloaded(page.getByRole('button', { name: 'SVG' }));
    return page.evaluate((text) => {
      const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
      return {
        error: doc.querySelector('parsererror')?.textContent ?? null,
        lines: [...doc.querySelectorAll('polyline')].map((p) => ({
          title: p.querySelector('title').textContent,
          points: p.getAttribute('points').trim().split(/\s+/).length,
        })),
        texts: [...doc.querySelectorAll('text')].map((t) => t.textContent),
      };
    }, bytes.toString('utf8'));
  };
  const all = await svg();
  assert.equal(all.error, null, 'the SVG parses');
  assert.deepEqual(all.lines.map((l) => l.title), ['v', 'v_ref', 'force'], 'a polyline per shown series');
  for (const l of all.lines) assert.ok(l.points > 100, `${l.title}: ${l.points} points`);
  for (const title of ['time [s]', 'v, v_ref [m/s]', 'force [N]']) assert.ok(all.texts.includes(title), `axis title ${title}`);

  await page.getByLabel('show v_ref').click();
  const fewer = await svg();
  assert.deepEqual(fewer.lines.map((l) => l.title), ['v', 'force'], 'a hidden series is left out');
  await page.getByLabel('show v_ref').click();
});

test('rtol and atol are offered for the BDF solver only, and a BDF run follows them', async () => {
  const { page } = shared;
  await open('cruise_control.json', 'vehicle');
  for (const solver of ['rk4', 'heun', 'euler']) {
    await page.getByLabel('solver').selectOption(solver);
    assert.equal(await page.getByLabel('rtol').count(), 0, `no rtol for ${solver}`);
    assert.equal(await page.getByLabel('atol').count(), 0, `no atol for ${solver}`);
  }
  await page.getByLabel('solver').selectOption('bdf');
  await page.getByLabel('stop').fill('100');
  // The tolerances reach the solver: a tighter one costs more evaluations.
  const evaluations = async (rtol, atol) => {
    await page.getByLabel('rtol').fill(rtol);
    await page.getByLabel('atol').fill(atol);
    const id = await run();
    const status = await (await fetch(`${shared.server.url}/api/simulations/${id}`)).json();
    return Number(status.summary.match(/(\d+) evaluations/)[1]);
  };
  const loose = await evaluations('1e-3', '1e-5');
  const tight = await evaluations('1e-9', '1e-10');
  assert.ok(tight > 2 * loose, `${tight} evaluations at rtol 1e-9, ${loose} at 1e-3`);
  // The continuous plant under a held PID: BDF at tight tolerances ends where RK4 does.
  const bdf = Number(await page.getByTestId('final-v').textContent());
  await page.getByLabel('solver').selectOption('rk4');
  assert.equal(await page.getByLabel('rtol').count(), 0);
  await run();
  const rk4 = Number(await page.getByTestId('final-v').textContent());
  assert.ok(Math.abs(bdf - rk4) < 1e-4 * Math.abs(rk4), `BDF ${bdf}, RK4 ${rk4}`);
});

test('the chart holds per pixel column the extremes of a sine, and the rows themselves zoomed in', async () => {
  const { page } = shared;
  await open('sines.json', 's');
  const id = await run();
  const { rows } = await csv(id);
  assert.equal(rows.length, 200001);
  const chart = await held();
  const [t, y, z] = chart.data;
  assert.ok(t.length % 2 === 0 && t.length <= 2 * chart.width && t.length >= chart.width, `${t.length} points for ${chart.width} pixels`);
  // Column by column: the rows from its first time to its last, and no other, give its extremes.
  let r = 0;
  for (let k = 0; k < t.length; k += 2) {
    assert.equal(rows[r][0], t[k], `column ${k / 2} starts at the row after the previous one`);
    let [lo, hi, zlo, zhi] = [Infinity, -Infinity, Infinity, -Infinity];
    for (; r < rows.length && rows[r][0] <= t[k + 1]; r++) {
      [lo, hi] = [Math.min(lo, rows[r][1]), Math.max(hi, rows[r][1])];
      [zlo, zhi] = [Math.min(zlo, rows[r][2]), Math.max(zhi, rows[r][2])];
    }
    assert.deepEqual([Math.min(y[k], y[k + 1]), Math.max(y[k], y[k + 1])], [lo, hi], `y, column ${k / 2}`);
    assert.deepEqual([Math.min(z[k], z[k + 1]), Math.max(z[k], z[k + 1])], [zlo, zhi], `z, column ${k / 2}`);
    // Each column spans more than a period of the 10 Hz sine: it reaches ±A.
    assert.ok(Math.abs(lo + AMPLITUDE) < 2e-3 && Math.abs(hi - AMPLITUDE) < 2e-3, `column ${k / 2}: ${lo} … ${hi}`);
  }
  assert.equal(r, rows.length, 'the columns cover every row');
  await shot(page, 'run-sines');

  // Zoomed in on 1 s (1000 rows): the chart holds the rows themselves.
  const over = await page.locator('[data-testid="chart"] .u-over').boundingBox();
  const x0 = over.x + (over.width * 100) / 200;
  await page.mouse.move(x0, over.y + 50);
  await page.mouse.down();
  await page.mouse.move(x0 + over.width / 200, over.y + 60, { steps: 4 });
  await page.mouse.up();
  await page.getByRole('button', { name: 'Reset zoom' }).waitFor();
  const zoomed = await held();
  const [zt, zy] = zoomed.data;
  assert.ok(zt.length > 100 && zt.length < 2 * zoomed.width, `${zt.length} rows shown`);
  const first = rows.findIndex((row) => row[0] === zt[0]);
  assert.ok(first > 0);
  zt.forEach((time, i) => {
    assert.equal(time, rows[first + i][0]);
    assert.equal(zy[i], rows[first + i][1]);
  });
  await page.mouse.dblclick(over.x + over.width / 2, over.y + over.height / 2);
  await page.getByRole('button', { name: 'Reset zoom' }).waitFor({ state: 'detached' });
  assert.deepEqual((await held()).data, chart.data, 'a double-click shows the whole run again');
});

test('the run stays when another view is shown, and the chart fits the window it comes back to', async () => {
  const { page } = shared;
  await open('cruise_control.json', 'vehicle');
  await page.getByLabel('stop').fill('100');
  const id = await run();
  const before = await held();
  await page.getByRole('tab', { name: 'Editor' }).click();
  await page.setViewportSize({ width: 1100, height: 700 });
  await page.getByRole('tab', { name: 'Run' }).click();
  await page.waitForFunction((w) => document.querySelector('[data-testid="chart"]').uplot.width !== w, before.width);
  const box = await page.getByTestId('chart').boundingBox();
  const after = await held();
  assert.deepEqual([after.width, after.height], [Math.round(box.width), Math.round(box.height)], 'the chart fills its box');
  assert.ok(after.width < before.width);
  assert.equal(await page.getByTestId('run-state').getAttribute('data-run'), id, 'the same run');
  assert.equal(await page.getByTestId('final-v').textContent(), String((await csv(id)).rows.at(-1)[1]));
  await shot(page, 'run-after-resize');
  await page.setViewportSize({ width: 1400, height: 900 });
});

test('Ctrl+Enter runs; a bad setting is shown as an error', async () => {
  const { page } = shared;
  await open('cruise_control.json', 'vehicle');
  await page.getByLabel('stop').fill('20');
  await page.getByLabel('stop').press('Control+Enter');
  await page.locator('[data-testid="run-state"][data-plotted-ms]').waitFor({ timeout: 30000 });
  const id = await page.getByTestId('run-state').getAttribute('data-run');
  assert.equal((await csv(id)).rows.at(-1)[0], 20);

  await page.getByLabel('step').fill('-1');
  await page.getByRole('button', { name: 'Run' }).click();
  const error = page.getByRole('alert');
  await error.waitFor();
  assert.match(await error.textContent(), /step/);
  assert.match(await page.getByTestId('run-state').textContent(), /failed/);

  await page.getByLabel('step').fill('0.01');
  await page.getByLabel('stop').fill('ten');
  await page.getByRole('button', { name: 'Run' }).click();
  await page.getByRole('alert').filter({ hasText: 'stop: “ten” is not a number' }).waitFor();
});

test('a Run that fails leaves the previous result marked out of date, its error in words and a way to the block', async () => {
  const { page } = shared;
  await open('cruise_control.json', 'vehicle');
  await page.getByLabel('stop').fill('20');
  const id = await run();
  assert.equal(await page.getByTestId('run-stale').count(), 0, 'a fresh result is not out of date');
  // Over the server's limit: the previous result is dimmed and labelled; the
  // error names the setting, without a "(key stop)" tail.
  await page.getByLabel('step').fill('1e-9');
  await page.getByLabel('stop').fill('1e6');
  await page.getByRole('button', { name: 'Run' }).click();
  const error = page.getByTestId('run-error');
  await error.waitFor();
  const text = await error.textContent();
  assert.match(text, /^`stop`: the result would hold/);
  assert.doesNotMatch(text, /\(key|line \d|column \d/);
  assert.match(await page.getByTestId('run-stale').textContent(), new RegExp(`previous run ${id}`));
  assert.equal(await page.getByTestId('run-body').getAttribute('data-stale'), 'true');
  await shot(page, 'run-failed-stale');
  // A good Run again: nothing is out of date.
  await page.getByLabel('step').fill('0.01');
  await page.getByLabel('stop').fill('5');
  await run();
  assert.equal(await page.getByTestId('run-stale').count(), 0);
  assert.equal(await page.getByTestId('run-body').getAttribute('data-stale'), null);

  // A model error: block and port in words, and a button that shows the block in the editor.
  await open('unwired.json', 'sum');
  await page.getByRole('button', { name: 'Run' }).click();
  await error.waitFor();
  const model = await error.textContent();
  assert.match(model, /^block `sum`, port `2`: /);
  assert.doesNotMatch(model, /^\d+:\d+|line \d|column \d|\(block/);
  await shot(page, 'run-model-error');
  await page.getByRole('button', { name: 'Show block sum in the editor' }).click();
  assert.equal(await page.getByRole('tab', { name: 'Editor' }).getAttribute('aria-selected'), 'true');
  await page.locator('.react-flow__node.selected[data-id="sum"]').waitFor();
  assert.equal(await page.locator('.react-flow__node.selected').count(), 1, 'the block alone is selected');
  await shot(page, 'run-model-error-shown');
});

test('a model with nothing to plot is not run: an empty one, or one without an Output, says what to add', async () => {
  const { page, server } = shared;
  await page.goto(server.url);
  await page.getByRole('tab', { name: 'Run' }).click();
  await page.getByRole('button', { name: 'Run' }).click();
  assert.match(await page.getByTestId('run-error').textContent(), /^The model is empty: add blocks/);
  assert.match(await page.getByTestId('run-state').textContent(), /failed/);
  await page.getByRole('tab', { name: 'Editor' }).click();
  await page.getByTestId('palette-Constant').dblclick();
  await page.getByTestId('block-constant1').waitFor();
  await page.getByRole('tab', { name: 'Run' }).click();
  await page.getByRole('button', { name: 'Run' }).click();
  await page.getByTestId('run-error').filter({ hasText: 'nothing to plot: add an Output block' }).waitFor();
  assert.equal(await page.getByTestId('run-state').getAttribute('data-run'), '', 'no simulation was started');
});

test('an offline run takes values for its inputs and records probed signals, the file unchanged', async () => {
  const { page } = shared;
  await open('ev_speed_controller.json', 'error');
  // Its Inports took their defaults: every plot was flat zero. A set point of
  // 15 m/s from the start, the vehicle at 5 m/s from 2 s on.
  await page.getByLabel('input speed_setpoint', { exact: true }).fill('15');
  await page.getByLabel('input vehicle_speed', { exact: true }).fill('5');
  await page.getByLabel('input vehicle_speed from', { exact: true }).fill('2');
  for (const p of ['error', 'pi']) {
    await page.getByLabel('probe signal').fill(p);
    await page.getByRole('button', { name: 'Probe', exact: true }).click();
  }
  await page.getByLabel('stop').fill('4');
  const id = await run();
  const { names, rows } = await csv(id);
  assert.ok(names.includes('probe_error') && names.includes('probe_pi'), names.join(','));
  const at = (t) => rows.reduce((best, r) => (Math.abs(r[0] - t) < Math.abs(best[0] - t) ? r : best));
  const error = names.indexOf('probe_error');
  assert.equal(at(1)[error], 15, 'set point 15, vehicle 0 before 2 s');
  assert.equal(at(3)[error], 10, 'set point 15, vehicle 5 after');
  const torque = names.indexOf('torque_request');
  assert.ok(rows.some((r) => r[torque] !== 0), 'the torque request is no longer flat zero');
  assert.match(await page.getByTestId('legend-probe_pi').textContent(), /\d/);
  await shot(page, 'run-inputs-probes');
  // The model as saved is the file: no Constant, Step or probe in it.
  await page.getByRole('tab', { name: 'Editor' }).click();
  assert.equal(await page.getByTestId('block-probe_error').count(), 0);
  assert.match(await page.getByTestId('block-speed_setpoint').textContent(), /Inport/);
  // A probe of a block that is not there is refused in words.
  await page.getByRole('tab', { name: 'Run' }).click();
  await page.getByLabel('probe signal').fill('nowhere');
  await page.getByRole('button', { name: 'Probe', exact: true }).click();
  await page.getByRole('button', { name: 'Run' }).click();
  await page.getByTestId('run-error').filter({ hasText: 'probe nowhere: the model has no block nowhere' }).waitFor();
});
