// The dashboard in a real browser: a run of the cruise control on the
// virtual clock, paced to the wall clock, its counters advancing; its gain
// changed from the page, and the output answering (v_ref = gain × pedal);
// a stop that asks first; the latency histogram of a run on the real
// clock on log axes; runs numbered apart from simulations; changes
// offered only where the model has something to change; bus counters.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { browser, perFile, root, serve, shot } from './support.mjs';

const shared = perFile(before, after);

/** Waits until `locator`'s text passes `ok`; returns it. */
async function until(locator, ok, timeout = 15000) {
  const end = Date.now() + timeout;
  for (;;) {
    const text = await locator.textContent().catch(() => '');
    if (ok(text)) return text;
    if (Date.now() > end) throw new Error(`still "${text}" after ${timeout} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A count as the page shows it (thousands separated). */
const count = (text) => Number(text.replace(/,/g, ''));

/** Starts a run of `config` from the dashboard; `virtual`: the virtual clock at pace 1. */
async function startRun(page, config, { virtual = true, duration = '60' } = {}) {
  await page.getByLabel('configuration path').fill(config);
  await page.getByLabel('virtual clock').setChecked(virtual);
  if (virtual) await page.getByLabel('pace').fill('1');
  await page.getByLabel('duration').fill(duration);
  await page.getByRole('button', { name: 'Start run' }).click();
  await until(page.getByTestId('run-frames'), (t) => count(t) > 0);
}

/**
 * A new folder to serve holding config/NAME: ev-can.toml on the in-process
 * bus `channel` (no network), without its ECU, and the DBC beside it.
 */
function evOnAVirtualBus(name, channel) {
  const folder = mkdtempSync(join(tmpdir(), 'tandem-dash-'));
  mkdirSync(join(folder, 'config'));
  copyFileSync(join(root, 'config/examples/ev.dbc'), join(folder, 'config/ev.dbc'));
  const config = readFileSync(join(root, 'config/examples/ev-can.toml'), 'utf8')
    .replace(/^transport = "udp".*$/m, `transport = "virtual"\nchannel = "${channel}"`)
    .replace(/^(group|port|bus_log) = .*$/gm, '')
    .replace(/\[ecu\][^[]*$/, '');
  writeFileSync(join(folder, `config/${name}`), config);
  return folder;
}

/** Stops the shown run through the question Stop asks, and waits for its end (stopped; done if it ended first). */
async function stopRun(page) {
  await page.getByRole('button', { name: 'Stop', exact: true }).click();
  await page.getByRole('alertdialog').getByRole('button', { name: 'Stop run' }).click();
  await until(page.getByTestId('live-state'), (t) => t === 'stopped' || t === 'done');
}

test("a running session's counters advance, a new gain shows in its output, and Stop asks first", async () => {
  const { page, server } = shared;
  await page.goto(server.url);
  await page.getByRole('tab', { name: 'Dashboard' }).click();
  // The configurations in config/ and config/examples/, Cargo's manifest aside.
  const select = page.getByLabel('configuration', { exact: true });
  await until(select, (t) => t.includes('config/examples/cruise.toml'));
  const listed = await select.locator('option').allTextContents();
  assert.ok(listed.includes('config/examples/ev.toml'), listed.join(', '));
  assert.ok(!listed.some((o) => o.endsWith('Cargo.toml')), listed.join(', '));
  await select.selectOption('config/examples/ev.toml');
  assert.equal(await page.getByLabel('configuration path').inputValue(), 'config/examples/ev.toml');
  await select.selectOption('config/examples/cruise.toml');
  assert.equal(await page.getByLabel('configuration path').inputValue(), 'config/examples/cruise.toml');
  // Pace applies to the virtual clock only.
  await page.getByLabel('virtual clock').setChecked(false);
  assert.equal(await page.getByLabel('pace').isDisabled(), true, 'pace on the real clock');
  await page.getByLabel('virtual clock').setChecked(true);
  assert.equal(await page.getByLabel('pace').isDisabled(), false, 'pace on the virtual clock');
  await page.getByLabel('pace').fill('1');
  await page.getByLabel('duration').fill('60');
  await page.getByRole('button', { name: 'Start run' }).click();

  const frames = page.getByTestId('run-frames');
  const first = count(await until(frames, (t) => count(t) > 0));
  await new Promise((r) => setTimeout(r, 1000));
  const second = count(await until(frames, (t) => count(t) > first));
  assert.ok(second > first, `frames ${first} then ${second}`);
  // Progress toward the duration: run time of 60 s, frames of 6,000.
  assert.match(await page.getByTestId('run-progress').textContent(), /^[\d.]+ s of 60 s$/);
  assert.equal(await page.getByTestId('live-state').textContent(), 'running');
  await shot(page, 'dashboard-1-running');

  // Values carry the units of the model's Output blocks (v and v_ref in m/s, force in N).
  const vRef = page.getByTestId('live-v_ref');
  assert.equal(await until(vRef, (t) => t === '25.00 m/s'), '25.00 m/s', 'v_ref = 50 × 0.5 before the change');
  assert.match(await page.getByTestId('live-v').textContent(), /^-?[\d.,e-]+ m\/s$/);
  assert.match(await page.getByTestId('live-force').textContent(), /^-?[\d.,e-]+ N$/);
  // The block list holds only blocks with tunable parameters.
  const { json } = await page.evaluate(async () => ({ json: await (await fetch('/api/runs/r1')).json() }));
  const tunableBlocks = [...new Set(json.tunable.map((t) => t.block))].sort();
  const offered = (await page.getByLabel('block', { exact: true }).locator('option:not([disabled])').allTextContents()).sort();
  assert.deepEqual(offered, tunableBlocks);
  await page.getByLabel('change kind').selectOption('block');
  await page.getByLabel('block', { exact: true }).selectOption('speed_map');
  await page.getByLabel('parameter').selectOption('gain');
  await page.getByLabel('new value').fill('30');
  await page.getByRole('button', { name: 'Change' }).click();
  assert.equal(await until(vRef, (t) => t === '15.00 m/s'), '15.00 m/s', 'v_ref = 30 × 0.5 after it');
  await until(page.getByTestId('change-log'), (t) => /applied at frame [\d,]+/.test(t));
  await shot(page, 'dashboard-2-changed');

  // Stop asks; Cancel keeps the run going.
  await page.getByRole('button', { name: 'Stop', exact: true }).click();
  const question = page.getByRole('alertdialog');
  assert.match(await question.textContent(), /Stop run r1\?/);
  await shot(page, 'dashboard-3-stop-asks');
  await question.getByRole('button', { name: 'Cancel' }).click();
  const kept = count(await frames.textContent());
  await until(frames, (t) => count(t) > kept + 50);
  assert.equal(await page.getByTestId('live-state').textContent(), 'running');
  // Confirmed, it stops before its duration, and nothing can be changed any more.
  await stopRun(page);
  const status = await page.evaluate(async () => (await fetch('/api/runs/r1')).json());
  assert.equal(status.state, 'stopped', 'a run stopped before its end is not done');
  assert.ok(status.frames < 6000, `stopped at frame ${status.frames} of 6000`);
  for (const label of ['change kind', 'parameter', 'new value']) {
    assert.equal(await page.getByLabel(label, { exact: true }).isDisabled(), true, `${label} after the end`);
  }
  assert.equal(await page.getByRole('button', { name: 'Change' }).isDisabled(), true);
  assert.equal(await page.getByRole('button', { name: 'Stop', exact: true }).isDisabled(), true);
});

test('the latency histogram of a run on the real clock has log axes; on the virtual clock it says why there is none', async () => {
  const { page, server } = shared;
  await page.goto(server.url);
  await page.getByRole('tab', { name: 'Dashboard' }).click();
  await startRun(page, 'config/examples/cruise.toml', { virtual: true, duration: '5' });
  await until(page.getByTestId('histogram-virtual'), (t) => /virtual clock/.test(t));
  assert.equal(await page.getByTestId('histogram').count(), 0, 'no histogram of charged latencies');
  await stopRun(page);

  await startRun(page, 'config/examples/cruise.toml', { virtual: false, duration: '5' });
  await until(page.getByTestId('run-frames'), (t) => count(t) >= 150);
  const histogram = page.getByTestId('histogram');
  await histogram.waitFor();
  assert.equal(await page.getByTestId('histogram-x-title').textContent(), 'latency (log scale)');
  assert.equal(await page.getByTestId('histogram-y-title').textContent(), 'wake-ups (log)');
  // The count axis: 1, 10, 100, … equally spaced, so logarithmic.
  const ticks = page.getByTestId('histogram-y-tick');
  const labels = (await ticks.allTextContents()).map(count);
  assert.ok(labels.length >= 3, `ticks ${labels}`);
  labels.forEach((v, i) => assert.equal(v, 10 ** i, `tick ${i} of ${labels}`));
  const ys = await ticks.evaluateAll((ts) => ts.map((t) => Number(t.getAttribute('y'))));
  const gaps = ys.slice(1).map((y, i) => ys[i] - y);
  gaps.forEach((g) => assert.ok(Math.abs(g - gaps[0]) < 0.01 && g > 0, `tick gaps ${gaps}`));
  // The latency axis: powers of ten with their units.
  const xs = await page.getByTestId('histogram-x-tick').allTextContents();
  assert.ok(xs.length >= 2 && xs.every((t) => /^(1|10|100) (ns|µs|ms)$/.test(t)), `latency ticks ${xs}`);
  // The bars hold every wake-up counted: their counts add up to the frames run.
  const bars = await histogram.locator('rect title').allTextContents();
  const total = bars.reduce((s, t) => s + count(t.match(/: ([\d,]+) wake-ups$/)[1]), 0);
  const frames = count(await page.getByTestId('run-frames').textContent());
  assert.ok(total > 0 && total <= frames + 1 && total >= frames - 40, `${total} wake-ups in bars, ${frames} frames`);
  await shot(page, 'dashboard-4-histogram');
  await stopRun(page);
});

test("a built-in plant offers its declared parameters beside its inputs", async () => {
  const { page, server } = shared;
  await page.goto(server.url);
  await page.getByRole('tab', { name: 'Dashboard' }).click();
  await startRun(page, 'config/examples/ev.toml', { duration: '10' });
  const id = (await page.locator('[aria-current="true"]').getAttribute('data-testid')).slice('run-'.length);
  const status = await page.evaluate(async (id) => (await fetch(`/api/runs/${id}`)).json(), id);
  const declared = ['mass', 'drag_coefficient', 'frontal_area', 'rolling_resistance', 'friction', 'brake_gain', 'power_limit'];
  assert.deepEqual(status.tunable.map((t) => `${t.block}/${t.param}`), declared.map((p) => `ev/${p}`));
  assert.equal(status.tunable[0].value, 1800, 'the mass as loaded (kg)');
  await page.getByLabel('change kind', { exact: true }).selectOption('block');
  await page.getByLabel('block', { exact: true }).selectOption('ev');
  const params = await page.getByLabel('parameter', { exact: true }).locator('option:not([disabled])').allTextContents();
  assert.deepEqual(params, declared);
  await page.getByLabel('change kind', { exact: true }).selectOption('input');
  const inputs = await page.getByLabel('input', { exact: true }).locator('option:not([disabled])').allTextContents();
  assert.deepEqual(inputs, status.inputs);
  // A built-in plant's values carry the units it declares.
  assert.equal(status.units.vehicle_speed, 'm/s');
  assert.match(await until(page.getByTestId('live-vehicle_speed'), (t) => / m\/s$/.test(t)), /^-?[0-9.,e+-]+ m\/s$/);
  assert.match(await page.getByTestId('live-dc_voltage').textContent(), / V$/);
  await shot(page, 'dashboard-5-plant-parameters');
  await stopRun(page);
});

test('the live chart plots like the Run view: one y axis per unit, titles never cut, a legend of values without noise', async () => {
  const { page, server } = shared;
  await page.goto(server.url);
  await page.getByRole('tab', { name: 'Dashboard' }).click();
  await startRun(page, 'config/examples/ev.toml', { duration: '30' });
  const id = (await page.locator('[aria-current="true"]').getAttribute('data-testid')).slice('run-'.length);
  const status = await page.evaluate(async (id) => (await fetch(`/api/runs/${id}`)).json(), id);
  const units = [...new Set(status.outputs.map((o) => status.units[o] ?? ''))];
  assert.ok(units.length >= 2, `the EV plant's outputs come in several units: ${units}`);
  // One y axis per unit, each titled with its unit, the title within the axis's length.
  await until(page.getByTestId(`live-${status.outputs[0]}`), (t) => t !== '' && t !== '–');
  const axes = await page.evaluate(() => {
    const u = document.querySelector('[data-testid="live-chart"]').uplot;
    return u.axes.slice(1).map((a) => ({ label: a.label, scale: a.scale }));
  });
  assert.equal(axes.length, units.length, `axes ${JSON.stringify(axes)} for units ${units}`);
  for (const unit of units.filter(Boolean)) assert.ok(axes.some((a) => a.label.endsWith(`[${unit}]`)), `an axis in ${unit}: ${JSON.stringify(axes)}`);
  const room = Math.floor((260 - 50) / 6.5);
  for (const a of axes) assert.ok(a.label.length <= room && !/…$/.test(a.label.replace(/ \[.*\]$/, '')) || /, …/.test(a.label), `a whole title: ${a.label}`);
  // The legend: a value with its unit for every output, read at a fixed number
  // of digits, never a "--", never noise such as 1e-61.
  await new Promise((r) => setTimeout(r, 1500));
  for (const o of status.outputs) {
    const text = await page.getByTestId(`live-${o}`).textContent();
    assert.match(text, /^(0|-?\d+\.?\d*|-?\d\.\d{3}e[-+]?\d+)( \S+)?$/, `${o}: ${text}`);
    assert.ok(!/e-(1\d|[2-9]\d)/.test(text), `${o} reads noise: ${text}`);
    if (!text.startsWith('0 ') && text !== '0') assert.equal(text.split(' ')[0].replace(/^-|e.*$/g, '').replace('.', '').replace(/^0+/, '').length, 4, `four digits: ${text}`);
  }
  // Under the cursor, the legend reads the row there: an earlier one than the latest.
  const readAll = () => Promise.all(status.outputs.map((o) => page.getByTestId(`live-${o}`).textContent()));
  const latest = await readAll();
  const over = await page.locator('[data-testid="live-chart"] .u-over').boundingBox();
  await page.mouse.move(over.x + 2, over.y + over.height / 2);
  await page.waitForTimeout(300);
  const earlier = await readAll();
  assert.notDeepEqual(earlier, latest, 'the values under the cursor at the chart’s left edge');
  await shot(page, 'dashboard-6-live-chart');
  await page.mouse.move(0, 0);
  // Opened again, the dashboard shows the only run under way.
  await page.goto(server.url);
  await page.getByRole('tab', { name: 'Dashboard' }).click();
  await until(page.getByTestId('live-state'), (t) => t === 'running');
  assert.equal(await page.locator('[aria-current="true"]').getAttribute('data-testid'), `run-${id}`);
  await stopRun(page);
});

test("a run's entry names its configuration and start time; its files are offered, an [ecu] left unstarted said, a stop read as stopped", async () => {
  // ev-can.toml on an in-process bus, its recording, bus log and [ecu] kept.
  const folder = mkdtempSync(join(tmpdir(), 'tandem-dash-'));
  mkdirSync(join(folder, 'config'));
  for (const f of ['ev.dbc', 'ecu.toml']) copyFileSync(join(root, 'config/examples', f), join(folder, 'config', f));
  const config = readFileSync(join(root, 'config/examples/ev-can.toml'), 'utf8')
    .replace(/^transport = "udp".*$/m, 'transport = "virtual"\nchannel = "dash-ecu"')
    .replace(/^(group|port) = .*$/gm, '');
  writeFileSync(join(folder, 'config/ev-can.toml'), config);
  const server = await serve(folder);
  const { browser: b, page, violations } = await browser();
  try {
    await page.goto(server.url);
    await page.getByRole('tab', { name: 'Dashboard' }).click();
    const before = Date.now() / 1000;
    await startRun(page, 'config/ev-can.toml', { duration: '60' });
    const status = await page.evaluate(async () => (await fetch('/api/runs/r1')).json());
    assert.ok(status.started >= before - 5 && status.started <= Date.now() / 1000 + 5, `started ${status.started}`);
    assert.deepEqual(status.files, ['results/ev-can.csv', 'results/ev-can.log']);
    assert.match(status.ecu, /\[ecu\] is not started/);
    // The list: the configuration's file and the time it started.
    const about = await until(page.getByTestId('about-r1'), (t) => t.includes('ev-can.toml'));
    assert.match(about, /^ev-can\.toml · \d\d:\d\d:\d\d$/);
    assert.ok(await page.getByTestId('about-r1').evaluate((e) => e.scrollWidth <= e.clientWidth), 'the entry is not cut');
    // The run says its ECU is not running, and offers what it writes.
    assert.match(await page.getByTestId('run-ecu').textContent(), /\[ecu\] is not started by a run started here/);
    await page.getByTestId('run-file-results/ev-can.csv').waitFor();
    await page.getByTestId('run-file-results/ev-can.log').waitFor();
    await shot(page, 'dashboard-9-run-files');
    await stopRun(page);
    assert.equal(await page.getByTestId('live-state').textContent(), 'stopped', 'stopped 60 s before its end');
    await until(page.getByTestId('run-r1').locator('.rt-Badge').last(), (t) => t === 'stopped');
    // Once it has ended, its recording downloads through the API.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('run-file-results/ev-can.csv').click()]);
    assert.equal(download.suggestedFilename(), 'ev-can.csv');
    const text = readFileSync(await download.path(), 'utf8');
    assert.match(text.split('\n')[0], /vehicle_speed/);
  } finally {
    await b.close();
    server.stop();
    rmSync(folder, { recursive: true, force: true });
  }
  assert.deepEqual(violations, []);
});

test('runs are numbered apart from simulations', async () => {
  const server = await serve();
  const { browser: b, page, violations } = await browser();
  try {
    await page.goto(server.url);
    const model = readFileSync(join(root, 'models/examples/cruise_control.json'), 'utf8');
    const sim = await page.evaluate(async (model) => {
      const r = await fetch('/api/simulations', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ model, stop: 1 }) });
      return r.json();
    }, model);
    assert.equal(sim.id, 's1');
    await page.getByRole('tab', { name: 'Dashboard' }).click();
    await startRun(page, 'config/examples/cruise.toml', { duration: '5' });
    const listed = await page.locator('ul[aria-label="runs"] [data-testid^="run-"]').evaluateAll((bs) => bs.map((b) => b.dataset.testid));
    assert.deepEqual(listed, ['run-r1']);
    assert.match(await page.getByTestId('run-r1').textContent(), /^r1Cruise control/);
    await stopRun(page);
    assert.deepEqual(violations, []);
  } finally {
    await b.close();
    server.stop();
  }
});

test("a run's buses show their counters, the same as its report at the end", async () => {
  const folder = evOnAVirtualBus('bus.toml', 'dashboard-test');
  const server = await serve(folder);
  const { browser: b, page, violations } = await browser();
  try {
    await page.goto(server.url);
    await page.getByRole('tab', { name: 'Dashboard' }).click();
    await until(page.getByLabel('configuration', { exact: true }), (t) => t.includes('config/bus.toml'));
    await startRun(page, 'config/bus.toml', { duration: '2' });
    const tx = page.getByTestId('bus-can0-tx frames');
    await until(tx, (t) => count(t) > 0);
    await until(page.getByTestId('live-state'), (t) => t === 'done');
    const status = await page.evaluate(async () => (await fetch('/api/runs/r1')).json());
    const can0 = status.report.buses.can0;
    for (const name of ['tx frames', 'rx frames', 'rx timeouts', 'bus errors', 'tx errors']) {
      assert.equal(count(await page.getByTestId(`bus-can0-${name}`).textContent()), can0[name], name);
    }
    assert.ok(can0['tx frames'] > 0 && can0['rx timeouts'] > 0, JSON.stringify(can0));
    await shot(page, 'dashboard-6-bus');
    assert.deepEqual(violations, []);
  } finally {
    await b.close();
    server.stop();
    rmSync(folder, { recursive: true, force: true });
  }
});

test('a fault injected from the dashboard acts on the bus and is reported; a refused one says why', async () => {
  const folder = evOnAVirtualBus('faults.toml', 'dashboard-faults');
  const server = await serve(folder);
  const { browser: b, page, violations } = await browser();
  try {
    await page.goto(server.url);
    await page.getByRole('tab', { name: 'Dashboard' }).click();
    await until(page.getByLabel('configuration', { exact: true }), (t) => t.includes('config/faults.toml'));
    await startRun(page, 'config/faults.toml', { duration: '4' });
    // Refused: the speeds carry no E2E protection to corrupt.
    await page.getByLabel('fault kind').selectOption('bad_crc');
    await page.getByLabel('message', { exact: true }).selectOption('VCU_Speeds');
    await page.getByRole('button', { name: 'Inject' }).click();
    await until(page.getByTestId('fault-answer'), (t) => t.includes("needs the message's E2E protection"));
    // Taken: the speeds (every 10 ms) dropped for 0.5 s.
    await page.getByLabel('fault kind').selectOption('drop');
    await page.getByLabel('fault duration').fill('0.5');
    await page.getByRole('button', { name: 'Inject' }).click();
    await until(page.getByTestId('change-log'), (t) => t.includes('fault on can0: drop VCU_Speeds for 0.5 s'));
    // Slot 0 is the configuration's own fault (at 12 s: not reached in 4 s).
    const row = page.getByTestId('bus-can0-fault-1');
    await until(row, (t) => t === '50 frames affected', 10000);
    assert.equal(await page.getByTestId('bus-can0-fault-0').textContent(), 'not yet');
    await until(page.getByTestId('live-state'), (t) => t === 'done');
    const status = await page.evaluate(async () => (await fetch('/api/runs/r1')).json());
    const faults = status.report.buses.can0.faults;
    assert.equal(faults[1].fault, 'drop VCU_Speeds for 0.5 s');
    assert.equal(faults[1].affected, 50);
    assert.equal(faults[1].ended_frame - faults[1].began_frame, 500);
    assert.deepEqual(status.faults, { can0: ['VCU_Speeds', 'VCU_Powertrain', 'BMS_Status', 'VCU_Diagnostics'] });
    await shot(page, 'dashboard-7-faults');
    assert.deepEqual(violations, []);
  } finally {
    await b.close();
    server.stop();
    rmSync(folder, { recursive: true, force: true });
  }
});
