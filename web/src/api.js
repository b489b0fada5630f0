// The server's API (serve/API.md): JSON requests with the token when the
// server asks for one, WebSocket URLs, and the binary row batches.

const TOKEN = 'tandem-token';

function authHeaders() {
  const token = sessionStorage.getItem(TOKEN);
  return token ? { Authorization: `Bearer ${token}` } : {};
}

/** A request; bodies are JSON, sent as they are given (strings as text). */
export async function api(method, path, body) {
  const type = body === undefined ? {} : { 'Content-Type': 'application/json' };
  const init = { method, headers: { ...type, ...authHeaders() } };
  if (body !== undefined) init.body = typeof body === 'string' ? body : JSON.stringify(body);
  let response = await fetch(path, init);
  if (response.status === 401) {
    const token = window.prompt('This server needs its token:');
    if (token) {
      sessionStorage.setItem(TOKEN, token);
      response = await fetch(path, { ...init, headers: { ...type, ...authHeaders() } });
    }
  }
  const text = await response.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  return { ok: response.ok, status: response.status, json, text };
}

/** The file at `path` in the served folder as a blob, with the token; null when it cannot be read. */
export async function fetchFile(path) {
  const response = await fetch(`/api/files/${path.split('/').map(encodeURIComponent).join('/')}`, { headers: authHeaders() });
  return response.ok ? response.blob() : null;
}

/** A WebSocket on `path`, with the token when there is one. */
export function socket(path) {
  const token = sessionStorage.getItem(TOKEN);
  const url = new URL(path, window.location.href);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  if (token) url.searchParams.set('token', token);
  const ws = new WebSocket(url);
  ws.binaryType = 'arraybuffer';
  return ws;
}

/** A binary batch: `{first, rows, columns, values}` (values row-major). */
export function readBatch(buffer) {
  const head = new DataView(buffer, 0, 12);
  const first = head.getUint32(0, true);
  const rows = head.getUint32(4, true);
  const columns = head.getUint32(8, true);
  const values = new Float64Array(buffer.slice(12));
  return { first, rows, columns, values };
}
