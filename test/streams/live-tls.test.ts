/**
 * End-to-end: HTTPS with HTTP/2 and HTTP/1.1 on one port (`--tls-cert`/`--tls-key`,
 * docs/reference/configuration.md): ALPN picks h2, plain requests, errors and stream routes work
 * over it (many streams multiplexed on one connection), and `/db/live` works as wss:// over
 * HTTPS/1.1. The certificate is made at test time (test/helpers/tls.ts).
 */
import { connect, type ClientHttp2Session } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLive } from '../helpers/live-socket.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { makeTestCert, type TestCert } from '../helpers/tls.js';

let cert: TestCert;
let s: TestServer;
let h2: ClientHttp2Session;

beforeAll(async () => {
  cert = makeTestCert();
  s = await startServer({ tls: cert, env: { TABLEBASE_STREAM_HEARTBEAT_MS: '500', TABLEBASE_MAX_STREAMS_PER_IP: '1000' } });
  h2 = connect(s.base, { rejectUnauthorized: false });
}, 120_000);
afterAll(async () => {
  h2?.close();
  await s?.dispose();
  cert?.dispose();
});

interface H2Reply {
  status: number;
  headers: Record<string, unknown>;
  text: string;
}

function h2call(method: string, path: string, body?: unknown): Promise<H2Reply> {
  return new Promise((resolve, reject) => {
    const req = h2.request({ ':method': method, ':path': path, ...(body ? { 'content-type': 'application/json' } : {}) });
    let headers: Record<string, unknown> = {};
    let text = '';
    req.on('response', (h) => (headers = h));
    req.setEncoding('utf8');
    req.on('data', (d: string) => (text += d));
    req.on('end', () => resolve({ status: Number(headers[':status']), headers, text }));
    req.on('error', reject);
    req.end(body ? JSON.stringify(body) : undefined);
  });
}

/** Opens a stream route on the shared HTTP/2 connection; resolves each `data:` payload in turn. */
function h2stream(path: string, body: unknown) {
  const req = h2.request({ ':method': 'GET', ':path': `${path}?body=${encodeURIComponent(JSON.stringify(body))}`, accept: 'text/event-stream' });
  const payloads: unknown[] = [];
  const waiters: (() => void)[] = [];
  let buf = '';
  req.setEncoding('utf8');
  req.on('data', (d: string) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const frame = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const line = frame.split('\n').find((l) => l.startsWith('data: '));
      if (line) payloads.push(JSON.parse(line.slice(6)));
    }
    for (const w of waiters.splice(0)) w();
  });
  const nth = (n: number) =>
    new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no payload ${n} on ${path}`)), 10_000);
      const check = () => {
        if (payloads.length > n) {
          clearTimeout(timer);
          resolve(payloads[n]);
        } else waiters.push(check);
      };
      check();
    });
  return { nth, close: () => req.close() };
}

describe('HTTPS with HTTP/2 and HTTP/1.1 on one port', () => {
  it('serves plain routes and errors over HTTP/2, and over HTTP/1.1 on the same port', async () => {
    const health = await h2call('GET', '/health');
    expect(health.status).toBe(200);
    expect(health.headers['x-request-id']).toBeTruthy();
    expect(h2.alpnProtocol).toBe('h2');
    const created = await h2call('POST', '/db', { table: 'tasks', object: { title: 'over h2' } });
    expect(created.status, created.text).toBe(200);
    const id = (JSON.parse(created.text) as { data: { id: string } }).data.id;
    const got = await h2call('GET', `/db?body=${encodeURIComponent(JSON.stringify({ table: 'tasks', where: { id: { eq: id } } }))}`);
    expect(JSON.parse(got.text)).toMatchObject({ data: { id, title: 'over h2' } });
    const missing = await h2call('GET', `/db?body=${encodeURIComponent(JSON.stringify({ table: 'nope', where: {} }))}`);
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.text)).toMatchObject({ error: { code: 'NOT_FOUND' } });
    const h1 = await new Promise<{ status: number; version: string }>((resolve, reject) => {
      const req = httpsRequest(`${s.base}/health`, { rejectUnauthorized: false }, (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0, version: res.httpVersion });
      });
      req.on('error', reject);
      req.end();
    });
    expect(h1).toEqual({ status: 200, version: '1.1' });
  });

  it('multiplexes 20 stream routes on one HTTP/2 connection; a create reaches each', async () => {
    const t = `h2-${Date.now()}`;
    const streams = Array.from({ length: 20 }, () => h2stream('/db/stream/count', { table: 'tasks', where: { title: { eq: t } } }));
    try {
      for (const st of streams) expect(await st.nth(0)).toEqual({ data: 0 });
      const health = await h2call('GET', '/health');
      expect(health.status).toBe(200);
      await h2call('POST', '/db', { table: 'tasks', object: { title: t } });
      for (const st of streams) expect(await st.nth(1)).toEqual({ data: 1 });
    } finally {
      for (const st of streams) st.close();
    }
  });

  it('/db/live works as wss:// over HTTPS/1.1', async () => {
    const c = await openLive(s.base, { insecure: true });
    try {
      c.subscribe('n', 'count', { table: 'tasks', where: { title: { eq: 'wss' } } });
      expect(await c.nextFor('n')).toEqual({ type: 'data', id: 'n', data: 0 });
      await h2call('POST', '/db', { table: 'tasks', object: { title: 'wss' } });
      expect((await c.nextFor('n')).data).toBe(1);
    } finally {
      c.close();
    }
  });
});
