// Another site cannot steer `tandem serve` from a browser. A page served
// on another port tries every state-changing call (start a simulation,
// start a run, set an input of the running run, write a file, stop the
// run) as a JSON request, as a no-cors text/plain POST and as a beacon,
// reads the API, and opens the run's WebSocket: each fails, and the
// server shows that nothing changed. A page whose name is made to resolve
// to the server (DNS rebinding) is refused by name. The same calls from
// the server's own page succeed, so the refusals are the server's.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { browser, root, serve } from './support.mjs';

const shared = {};

/** `tandem serve` on a copy of the cruise control and its run configuration. */
before(async () => {
  shared.folder = mkdtempSync(join(tmpdir(), 'tandem-cross-origin-'));
  for (const file of ['models/examples/cruise_control.json', 'config/examples/cruise.toml']) {
    cpSync(join(root, file), join(shared.folder, file));
  }
  shared.server = await serve(shared.folder);
  shared.other = createServer((_, response) => {
    response.writeHead(200, { 'Content-Type': 'text/html' });
    response.end('<!doctype html><title>another site</title>');
  });
  await new Promise((ok) => shared.other.listen(0, '127.0.0.1', ok));
  shared.otherUrl = `http://127.0.0.1:${shared.other.address().port}/`;
});

after(async () => {
  shared.server?.stop();
  shared.other?.close();
  rmSync(shared.folder, { recursive: true, force: true });
});

/** A request from the test itself (no browser, no Origin): status and JSON. */
async function direct(method, path, body) {
  const init = { method, headers: { 'Content-Type': 'application/json' } };
  if (body !== undefined) init.body = JSON.stringify(body);
  const r = await fetch(shared.server.url + path, init);
  const text = await r.text();
  return { status: r.status, json: text ? JSON.parse(text) : null };
}

/** Starts the run another site will try to steer: paced, long. */
async function startRun() {
  const r = await direct('POST', '/api/runs', {
    config: 'config/examples/cruise.toml',
    virtual_clock: true,
    pace: 1,
    duration: 120,
  });
  assert.equal(r.status, 201, JSON.stringify(r.json));
  return r.json.id;
}

/**
 * Every state-changing call and the WebSocket, made by the page in
 * `page` against the API at `api` for run `run`: for each, what the page
 * saw (`threw`, a status, or for the socket whether it opened and how
 * many messages came).
 */
function attempts(page, api, run) {
  const model = readFileSync(join(root, 'models/examples/cruise_control.json'), 'utf8');
  return page.evaluate(
    async ({ api, run, model }) => {
      const simulation = JSON.stringify({ model, stop: 1 });
      const start = JSON.stringify({ config: 'config/examples/cruise.toml', virtual_clock: true });
      const input = JSON.stringify({ input: 'pedal', value: 0.9 });
      const results = {};
      const tryFetch = async (name, path, init) => {
        try {
          const r = await fetch(api + path, init);
          results[name] = r.type === 'opaque' ? 'opaque' : r.status;
        } catch {
          results[name] = 'threw';
        }
      };
      const json = { 'Content-Type': 'application/json' };
      const plain = { 'Content-Type': 'text/plain' };
      for (const [name, path, body] of [
        ['simulation', '/api/simulations', simulation],
        ['run', '/api/runs', start],
        ['input', `/api/runs/${run}/changes`, input],
      ]) {
        await tryFetch(`${name} json`, path, { method: 'POST', headers: json, body });
        await tryFetch(`${name} no-cors`, path, { method: 'POST', mode: 'no-cors', headers: plain, body });
        results[`${name} beacon`] = navigator.sendBeacon(api + path, body) ? 'queued' : 'refused';
      }
      await tryFetch('file', '/api/files/planted.json', { method: 'PUT', headers: json, body: '{}' });
      await tryFetch('stop', `/api/runs/${run}`, { method: 'DELETE' });
      await tryFetch('read', '/api/runs', {});
      results.socket = await new Promise((done) => {
        const url = new URL(`/api/runs/${run}/stream`, api || location.href);
        url.protocol = 'ws:';
        const socket = new WebSocket(url);
        let opened = false;
        let messages = 0;
        socket.onopen = () => (opened = true);
        socket.onmessage = () => (messages += 1);
        socket.onclose = () => done({ opened, messages });
        setTimeout(() => done({ opened, messages }), 5000);
      });
      // Let the beacons go out before the page is left.
      await new Promise((r) => setTimeout(r, 500));
      return results;
    },
    { api, run, model },
  );
}

/** The runs the server knows, as `[id, state]`. */
async function runs() {
  return (await direct('GET', '/api/runs')).json.runs.map((r) => [r.id, r.state]);
}

/**
 * Asserts that the attempts changed nothing: no simulation, the runs
 * `before` them, run `run` running with no input set, no file written.
 */
async function assertNothingChanged(before, run) {
  assert.deepEqual((await direct('GET', '/api/simulations')).json.simulations, []);
  assert.deepEqual(await runs(), before, 'no run started or stopped');
  assert.deepEqual(before.find(([id]) => id === run), [run, 'running']);
  assert.deepEqual((await direct('GET', `/api/runs/${run}/changes`)).json.changes, [], 'no input was set');
  assert.ok(!existsSync(join(shared.folder, 'planted.json')), 'no file was written');
}

test('a page of another origin can neither change nor watch a run', async () => {
  const run = await startRun();
  const { browser: b, page } = await browser();
  try {
    await page.goto(shared.otherUrl);
    const before = await runs();
    const seen = await attempts(page, shared.server.url, run);
    for (const name of ['simulation json', 'run json', 'input json', 'file', 'stop', 'read']) {
      assert.equal(seen[name], 'threw', `${name}: the browser lets another origin neither read nor preflight`);
    }
    assert.deepEqual(seen.socket, { opened: false, messages: 0 }, 'the WebSocket is refused');
    await assertNothingChanged(before, run);

    // From the server's own page, the input is set (by the JSON request,
    // not the text/plain one) and the WebSocket opens: the refusals above
    // are the server's, of calls that are otherwise right.
    await page.goto(shared.server.url);
    const own = await page.evaluate(async (run) => {
      const path = `/api/runs/${run}/changes`;
      const body = JSON.stringify({ input: 'pedal', value: 0.9 });
      const typed = await fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
      const plain = await fetch(path, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body });
      const opened = await new Promise((done) => {
        const socket = new WebSocket(`ws://${location.host}/api/runs/${run}/stream`);
        socket.onmessage = () => done(true);
        socket.onerror = () => done(false);
      });
      return { typed: typed.status, plain: plain.status, opened };
    }, run);
    assert.deepEqual(own, { typed: 202, plain: 415, opened: true });
    const changes = (await direct('GET', `/api/runs/${run}/changes`)).json.changes;
    assert.deepEqual(
      changes.map((c) => [c.what, c.value]),
      [['input pedal', 0.9]],
    );
  } finally {
    await b.close();
    await direct('DELETE', `/api/runs/${run}`);
  }
});

test('a page whose name is rebound to the server is refused by name', async () => {
  const run = await startRun();
  const port = new URL(shared.server.url).port;
  const page0 = `http://rebound.test:${port}/`;
  // The name resolves to the server; Chromium's own guard against pages of
  // other networks reaching loopback (Private/Local Network Access) is
  // turned off, so that what is tested is the server's.
  const { browser: b, page } = await browser(1500, 950, [
    '--host-resolver-rules=MAP rebound.test 127.0.0.1',
    '--disable-features=BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights,' +
      'PrivateNetworkAccessRespectPreflightResults,LocalNetworkAccessChecks',
  ]);
  try {
    // The page itself is refused by name...
    assert.equal((await page.goto(page0)).status(), 421);
    // ...and a page loaded under that name before it was rebound (here
    // given by the test) reaches the server same-origin, and is refused.
    await page.route(page0, (route) =>
      route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>rebound</title>' }),
    );
    await page.goto(page0);
    const before = await runs();
    const seen = await attempts(page, '', run);
    for (const name of ['simulation json', 'run json', 'input json', 'file', 'stop', 'read']) {
      assert.equal(seen[name], 421, `${name}: same-origin for the browser, refused for its Host`);
    }
    assert.deepEqual(seen.socket, { opened: false, messages: 0 });
    await assertNothingChanged(before, run);
  } finally {
    await b.close();
    await direct('DELETE', `/api/runs/${run}`);
  }
});
