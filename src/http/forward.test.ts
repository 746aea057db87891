/**
 * The forward of `serve --workers` (docs/scaling.md "The forward protocol"), both ends in one
 * process: a public HTTP server forwards as a worker does; the frames server and the HTTP socket
 * answer as the primary does. What the end-to-end tests (test/workers/) cannot reach: answers in
 * parts, answers out of order, a client leaving mid-exchange, the primary cutting an answer, and
 * the primary gone.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeclaredRoute } from './declare.js';
import { createFrameServer, type FrameServer } from './forward-exchange.js';
import { createForwarder, FRAMED_BODY_MAX, framesSocketPath, type Forwarder } from './forward.js';

const dir = mkdtempSync(join(tmpdir(), 'tb-forward-'));
const socketPath = join(dir, 'p.sock');
const WRITE = { serverWide: false } as DeclaredRoute;
const SERVER_WIDE = { serverWide: true } as DeclaredRoute;

let frames: FrameServer;
let httpSide: Server;
let publicServer: Server;
/** What the primary saw of requests it never answered (client gone, connection cut). */
const abandoned = new Map<string, Promise<string[]>>();

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (text += d));
    req.on('end', () => resolve(text));
  });
}

/** The primary's side: answers by path. */
async function primary(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url!, 'http://x');
  const body = await readBody(req);
  switch (url.pathname) {
    case '/whole':
      res.setHeader('RateLimit-Limit', '3');
      res.appendHeader('Set-Cookie', 'a=1');
      res.appendHeader('Set-Cookie', ['b=2']);
      res.writeHead(201, { 'Content-Type': 'application/json' });
      return void res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body, complete: req.complete }));
    case '/parts':
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('a');
      await new Promise((r) => setTimeout(r, 20));
      res.write(Buffer.from('b'));
      return void res.end('c');
    case '/slow':
      await new Promise((r) => setTimeout(r, Number(url.searchParams.get('ms'))));
      return void res.end(url.searchParams.get('n'));
    case '/hang': {
      const seen: string[] = [];
      abandoned.set(
        url.searchParams.get('id')!,
        new Promise((resolve) => {
          req.socket.once('close', () => seen.push('socket close'));
          res.once('close', () => (seen.push(`res close, destroyed ${res.destroyed}`), resolve(seen)));
        }),
      );
      return;
    }
    case '/reset':
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial');
      await new Promise((r) => setTimeout(r, 20));
      return void res.destroy();
    case '/empty':
      res.writeHead(204);
      return void res.end();
  }
}

function startPublic(forward: Forwarder, route = WRITE): Promise<Server> {
  const s = createServer((req, res) => {
    res.setHeader('x-request-id', 'rid-1');
    void forward(req, res, '203.0.113.7', 'rid-1', route);
  });
  return new Promise((r) => s.listen(0, '127.0.0.1', () => r(s)));
}

interface Answer {
  status: number;
  headers: Record<string, unknown>;
  body: string;
}

function call(server: Server, method: string, path: string, body?: string | Buffer, headers: Record<string, string> = {}): Promise<Answer> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

beforeAll(async () => {
  frames = createFrameServer(
    (req, res) => void primary(req, res),
    () => undefined,
  );
  await new Promise<void>((r) => frames.server.listen(framesSocketPath(socketPath), r));
  // The primary's HTTP socket: what is too big for a frame, and server-wide reads.
  httpSide = createServer((req, res) => void readBody(req).then((b) => res.writeHead(200, { 'x-way': 'http' }).end(`${req.headers['x-forwarded-for']} ${b.length}`)));
  await new Promise<void>((r) => httpSide.listen(socketPath, r));
  publicServer = await startPublic(createForwarder(socketPath));
});
afterAll(async () => {
  const closed = Promise.all([publicServer, httpSide, frames.server].map((s) => new Promise((r) => s.close(r))));
  // The forwarder's kept connections (frames and HTTP) and the test clients' end here.
  frames.closeAll();
  httpSide.closeAllConnections();
  publicServer.closeAllConnections();
  await closed;
  rmSync(dir, { recursive: true, force: true });
});

describe('forwarding a write as frames', () => {
  it('carries method, path, headers, the client address, the request id and the body; the answer comes back whole', async () => {
    const r = await call(publicServer, 'POST', '/whole?x=1', '{"a":1}', { 'content-type': 'application/json', authorization: 'Bearer t', connection: 'keep-alive' });
    expect(r.status).toBe(201);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers['ratelimit-limit']).toBe('3');
    expect(r.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(r.headers['x-request-id']).toBe('rid-1');
    const seen = JSON.parse(r.body);
    expect(seen).toMatchObject({ method: 'POST', url: '/whole?x=1', body: '{"a":1}', complete: true });
    expect(seen.headers).toMatchObject({ 'content-type': 'application/json', authorization: 'Bearer t', 'x-forwarded-for': '203.0.113.7', 'x-request-id': 'rid-1' });
    // Hop-by-hop headers stay with the connection they came on.
    expect(seen.headers.connection).toBeUndefined();
  });

  it('answers a body of exactly the frame limit as a frame, and one byte more over HTTP', async () => {
    const framed = await call(publicServer, 'POST', '/whole', 'x'.repeat(FRAMED_BODY_MAX));
    expect(JSON.parse(framed.body).body).toHaveLength(FRAMED_BODY_MAX);
    const over = await call(publicServer, 'POST', '/whole', 'x'.repeat(FRAMED_BODY_MAX + 1));
    expect(over.headers['x-way']).toBe('http');
    expect(over.body).toBe(`203.0.113.7 ${FRAMED_BODY_MAX + 1}`);
  });

  it('sends chunked bodies and server-wide reads over HTTP', async () => {
    const { port } = publicServer.address() as AddressInfo;
    const chunked = await new Promise<string>((resolve) => {
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/whole' }, (res) => {
        let t = '';
        res.on('data', (d) => (t += d));
        res.on('end', () => resolve(t));
      });
      req.write('abc');
      req.end('de');
    });
    expect(chunked).toBe('203.0.113.7 5');
    const wide = await startPublic(createForwarder(socketPath), SERVER_WIDE);
    expect((await call(wide, 'GET', '/whole')).headers['x-way']).toBe('http');
    await new Promise((r) => wide.close(r));
  });

  it('passes an answer written in parts, and an answer without a body', async () => {
    const r = await call(publicServer, 'GET', '/parts');
    expect(r).toMatchObject({ status: 200, body: 'abc' });
    expect(r.headers['content-type']).toBe('text/plain');
    expect((await call(publicServer, 'DELETE', '/empty')).status).toBe(204);
  });

  it('gives each of many concurrent exchanges its own answer, whatever order the primary answers in', async () => {
    const n = 60;
    const answers = await Promise.all(Array.from({ length: n }, (_, i) => call(publicServer, 'POST', `/slow?n=${i}&ms=${(n - i) % 7}`, '{}')));
    expect(answers.map((a) => a.body)).toEqual(Array.from({ length: n }, (_, i) => String(i)));
  });

  it('tells the primary when the client leaves before its answer', async () => {
    const { port } = publicServer.address() as AddressInfo;
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/hang?id=left' });
    req.on('error', () => undefined);
    req.end('{}');
    while (!abandoned.has('left')) await new Promise((r) => setTimeout(r, 5));
    req.destroy();
    expect(await abandoned.get('left')).toEqual(['socket close', 'res close, destroyed true']);
  });

  it('cuts the client connection when the primary cuts the answer', async () => {
    const { port } = publicServer.address() as AddressInfo;
    const outcome = await new Promise<string>((resolve) => {
      const req = request({ host: '127.0.0.1', port, method: 'GET', path: '/reset' }, (res) => {
        let t = '';
        res.on('data', (d) => (t += d));
        res.on('error', () => resolve(`cut after "${t}"`));
        res.on('end', () => resolve(`ended "${t}"`));
      });
      req.on('error', () => resolve('cut before the answer'));
      req.end();
    });
    expect(outcome).toBe('cut after "partial"');
  });

  it('answers 503 UNAVAILABLE with Retry-After when the primary is not there', async () => {
    const nowhere = await startPublic(createForwarder(join(dir, 'none.sock')));
    const r = await call(nowhere, 'POST', '/whole', '{}');
    expect(r.status).toBe(503);
    expect(r.headers['retry-after']).toBe('1');
    expect(JSON.parse(r.body).error.code).toBe('UNAVAILABLE');
    await new Promise((r2) => nowhere.close(r2));
  });

  it('answers 503 to exchanges in flight when the primary’s connection drops, and connects again for the next', async () => {
    const pending = call(publicServer, 'POST', '/hang?id=cut', '{}');
    while (!abandoned.has('cut')) await new Promise((r) => setTimeout(r, 5));
    frames.closeAll();
    const r = await pending;
    expect(r.status).toBe(503);
    expect(JSON.parse(r.body).error.code).toBe('UNAVAILABLE');
    expect((await abandoned.get('cut'))?.at(-1)).toBe('res close, destroyed true');
    expect((await call(publicServer, 'POST', '/slow?n=again&ms=0', '{}')).body).toBe('again');
  });
});
