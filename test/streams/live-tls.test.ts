/**
 * End-to-end: HTTPS with HTTP/2 and HTTP/1.1 on one port (`--tls-cert`/`--tls-key`,
 * docs/reference/configuration.md): ALPN picks h2, plain requests, errors and stream routes work
 * over it (many streams multiplexed on one connection), and `/db/live` works as wss:// over
 * HTTPS/1.1. The certificate is made at test time (test/helpers/tls.ts).
 */
import { connect, type ClientHttp2Session } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLive } from '../helpers/live-socket.js';
import { pause } from '../helpers/poll.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { makeTestCert, type TestCert } from '../helpers/tls.js';

let cert: TestCert;
let s: TestServer;
let h2: ClientHttp2Session;

beforeAll(async () => {
  cert = makeTestCert();
  // 30 per IP: the second round of 20 streams opens only if the first round's were released.
  s = await startServer({ tls: cert, env: { TABLEBASE_STREAM_HEARTBEAT_MS: '500', TABLEBASE_MAX_STREAMS_PER_IP: '30' } });
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
  bytes: Buffer;
}

function h2call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<H2Reply> {
  return new Promise((resolve, reject) => {
    const raw = Buffer.isBuffer(body);
    const req = h2.request({ ':method': method, ':path': path, ...(body && !raw ? { 'content-type': 'application/json' } : {}), ...headers });
    const chunks: Buffer[] = [];
    let answer: Record<string, unknown> = {};
    req.on('response', (h) => (answer = h));
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      const bytes = Buffer.concat(chunks);
      resolve({ status: Number(answer[':status']), headers: answer, text: bytes.toString('utf8'), bytes });
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : raw ? body : JSON.stringify(body));
  });
}

/** Opens a stream route on the shared HTTP/2 connection; resolves each `data:` payload in turn. */
function h2stream(path: string, body: unknown) {
  const req = h2.request({ ':method': 'GET', ':path': `${path}?body=${encodeURIComponent(JSON.stringify(body))}`, accept: 'text/event-stream' });
  const payloads: unknown[] = [];
  const waiters: (() => void)[] = [];
  let buf = '';
  const status = new Promise<number>((resolve) => req.on('response', (h) => resolve(Number(h[':status']))));
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
  return { nth, status, close: () => req.close() };
}

const open20 = (t: string) => Array.from({ length: 20 }, () => h2stream('/db/stream/count', { table: 'tasks', where: { title: { eq: t } } }));

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

  it('multiplexes 20 stream routes on one HTTP/2 connection; a create reaches each; closing them releases them', async () => {
    for (const round of [1, 2]) {
      const t = `h2-${round}-${Date.now()}`;
      // The server sees a closed HTTP/2 stream (RST_STREAM) a moment later: until it released the
      // first round, the second is over the cap of 30 (429). Retry until every stream opens.
      let streams = open20(t);
      for (let tries = 0; (await Promise.all(streams.map((st) => st.status))).some((st) => st !== 200); tries++) {
        for (const st of streams) st.close();
        if (tries > 50) throw new Error('the first round of streams was never released');
        await pause(100);
        streams = open20(t);
      }
      try {
        for (const st of streams) expect(await st.nth(0)).toEqual({ data: 0 });
        const health = await h2call('GET', '/health');
        expect(health.status).toBe(200);
        await h2call('POST', '/db', { table: 'tasks', object: { title: t } });
        for (const st of streams) expect(await st.nth(1)).toEqual({ data: 1 });
      } finally {
        for (const st of streams) st.close();
      }
    }
  });

  it('sign-up, a raw photo upload and its bytes, and the dashboard page work over HTTP/2', async () => {
    const up = await h2call('POST', '/auth/sign-up', { type: 'signUp', table: 'users', email: `h2.${Date.now()}@example.com`, password: 'a long password' });
    expect(up.status, up.text).toBe(200);
    const token = (JSON.parse(up.text) as { data: { accessToken: string } }).data.accessToken;
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: { r: 1, g: 2, b: 3 } } })
      .png()
      .toBuffer();
    const photo = await h2call('POST', '/img', png, { 'content-type': 'image/png', authorization: `Bearer ${token}` });
    expect(photo.status, photo.text).toBe(200);
    const id = (JSON.parse(photo.text) as { data: { id: string } }).data.id;
    const bytes = await h2call('GET', `/img/${id}`);
    expect(bytes.status).toBe(200);
    expect(bytes.bytes.equals(png)).toBe(true);
    const page = await h2call('GET', '/_');
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/<html/i);
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

describe('shutdown over TLS', () => {
  it('SIGTERM with an HTTP/2 stream, an idle HTTPS/1.1 connection and a wss /db/live open: exits 0, the socket gets 1001', async () => {
    const own = await startServer({ tls: cert });
    const session = connect(own.base, { rejectUnauthorized: false });
    session.on('error', () => undefined);
    try {
      const st = session.request({ ':path': `/db/stream/count?body=${encodeURIComponent(JSON.stringify({ table: 'tasks', where: {} }))}` });
      st.on('error', () => undefined);
      await new Promise((r) => st.once('data', r));
      const c = await openLive(own.base, { insecure: true });
      c.subscribe('a', 'count', { table: 'tasks', where: {} });
      await c.nextFor('a');
      expect(await own.stop('SIGTERM')).toBe(0);
      expect(await c.closed()).toBe(1001);
    } finally {
      session.close();
      await own.dispose();
    }
  });
});
