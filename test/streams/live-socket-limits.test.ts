/**
 * End-to-end: the limits of `/db/live` (docs/reference/live.md): subscriptions per connection,
 * per-IP caps counting subscriptions and stream routes together, 64 KiB frames (1009), the slow
 * reader (1008), pings and the idle cut-off, release on close, and the origin check on the upgrade.
 */
import { rmSync } from 'node:fs';
import type { Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openLive, type LiveClient } from '../helpers/live-socket.js';
import { until } from '../helpers/poll.js';
import { write } from '../helpers/rows.js';
import type { TestServer } from '../helpers/server.js';
import { openStream, type StreamClient } from '../helpers/stream-client.js';
import { signIn, startServerWithAdmin } from '../helpers/users.js';

const ADMIN = { email: 'live-limits-admin@example.com', password: 'admin-pass-1234' };
// Small caps so the test stays small: 20 subscriptions per connection, 30 per IP, 256 KiB unsent.
const ENV = { TABLEBASE_STREAM_HEARTBEAT_MS: '500', TABLEBASE_MAX_SUBSCRIPTIONS: '20', TABLEBASE_MAX_STREAMS_PER_IP: '30', TABLEBASE_MAX_RESPONSE_BYTES: String(256 * 1024) };

let s: TestServer;
let dataDir: string;
let admin: Record<string, string>;
const sockets: LiveClient[] = [];
const streams: StreamClient[] = [];
const live = async () => {
  const c = await openLive(s.base);
  sockets.push(c);
  return c;
};

beforeAll(async () => {
  ({ server: s, dataDir } = await startServerWithAdmin(ADMIN, { env: ENV }));
  admin = (await signIn(s, 'admins', ADMIN.email, ADMIN.password)).auth;
}, 120_000);
afterAll(async () => {
  await s?.dispose();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});
afterEach(async () => {
  for (const c of sockets.splice(0)) c.close();
  for (const c of streams.splice(0)) c.close();
  await until(open, (n) => n === 0, 'open count 0', 10_000);
});

async function open(): Promise<number> {
  const r = await s.get<{ data: { open: number; sockets: number } }>('/dashboard/live', {}, admin);
  expect(r.status, r.text).toBe(200);
  return r.json.data.open;
}
const socketOf = (c: LiveClient) => (c.ws as unknown as { _socket: Socket })._socket;

async function fill(c: LiveClient, n: number, prefix: string) {
  for (let i = 0; i < n; i++) c.subscribe(`${prefix}${i}`, 'count', { table: 'tasks', where: {} });
  for (let i = 0; i < n; i++) expect((await c.nextFor(`${prefix}${i}`)).type).toBe('data');
}

describe('/db/live limits', () => {
  it('subscriptions per connection are capped (429 for that id); per-IP caps count subscriptions and streams together; closing releases at once', async () => {
    const a = await live();
    await fill(a, 20, 'a');
    a.subscribe('over', 'count', { table: 'tasks', where: {} });
    expect(await a.nextFor('over')).toMatchObject({ type: 'error', status: 429, error: { code: 'RATE_LIMITED' } });
    const b = await live();
    await fill(b, 8, 'b');
    streams.push(await openStream(s.base, '/db/stream/count', { table: 'tasks', where: {} }));
    streams.push(await openStream(s.base, '/db/stream/count', { table: 'tasks', where: {} }));
    expect(await open()).toBe(30);
    b.subscribe('b-over', 'count', { table: 'tasks', where: {} });
    expect(await b.nextFor('b-over')).toMatchObject({ type: 'error', status: 429, error: { code: 'RATE_LIMITED' } });
    const refused = await openStream(s.base, '/db/stream/count', { table: 'tasks', where: {} });
    await refused.whenEnded();
    expect(refused.status).toBe(429);
    const dash = await s.get<{ data: { sockets: number; streams: { route: string; open: number }[] } }>('/dashboard/live', {}, admin);
    expect(dash.json.data.sockets).toBe(28);
    expect(dash.json.data.streams).toEqual(
      expect.arrayContaining([expect.objectContaining({ route: 'WS /db/live count', open: 28 }), expect.objectContaining({ route: 'GET /db/stream/count', open: 2 })]),
    );
    a.ws.close();
    await until(open, (n) => n === 10, 'open count 10', 5_000);
    b.subscribe('after', 'count', { table: 'tasks', where: {} });
    expect((await b.nextFor('after')).type).toBe('data');
  });

  it('an unsubscribe right after the subscribe (opening or open) leaves nothing registered', async () => {
    const c = await live();
    for (let i = 0; i < 10; i++) {
      c.subscribe(`r${i}`, 'list', { table: 'tasks', where: {}, limit: 50 });
      c.send({ type: 'unsubscribe', id: `r${i}` });
    }
    c.subscribe('barrier', 'list', { table: 'tasks', where: {}, limit: 50 });
    await c.nextFor('barrier');
    c.send({ type: 'ping' });
    await c.next((m) => m.type === 'pong');
    expect(await open()).toBe(1);
    // A first payload may have left before the unsubscribe was read; at most that one per id.
    for (let i = 0; i < 10; i++) expect(c.messages.filter((m) => m.id === `r${i}`).length).toBeLessThanOrEqual(1);
  });

  it('a frame over 64 KiB closes the connection with 1009', async () => {
    const c = await live();
    await fill(c, 3, 'f');
    c.send({ type: 'ping', pad: 'x'.repeat(65 * 1024) });
    expect(await c.closed()).toBe(1009);
    await until(open, (n) => n === 0, 'open count 0', 5_000);
  });

  it('a client that stops reading is cut once its unsent data passes maxResponseBytes, and released', async () => {
    const payload = 'p'.repeat(30_000);
    for (let i = 0; i < 4; i++) await write(s, 'POST', '/db', { table: 'big', object: { payload } });
    const c = await live();
    for (let i = 0; i < 20; i++) c.subscribe(`s${i}`, 'list', { table: 'big', where: {}, limit: 5 });
    for (let i = 0; i < 20; i++) expect((await c.nextFor(`s${i}`)).type).toBe('data');
    socketOf(c).pause();
    // Each create pushes ~150 KB to each of 20 subscriptions: the kernel buffers fill, then the server's.
    for (let i = 0; i < 6; i++) await write(s, 'POST', '/db', { table: 'big', object: { payload } });
    await until(open, (n) => n === 0, 'open count 0', 15_000);
    socketOf(c).resume();
    // 1008 when the close frame gets through the backlog; 1006 when the server had to cut the socket.
    expect([1008, 1006]).toContain(await c.closed(15_000));
  });

  it('pings every heartbeat; a connection silent for three heartbeats is closed and released', async () => {
    const c = await live();
    const pinged = new Promise<void>((r) => c.ws.once('ping', () => r()));
    await fill(c, 2, 'p');
    await pinged;
    socketOf(c).pause(); // no pong goes back
    await until(open, (n) => n === 0, 'open count 0', 10_000);
    socketOf(c).resume();
    await c.closed();
  });

  it('connections are capped per IP like streams (an empty connection costs memory too): 429 on the upgrade', async () => {
    for (let i = 0; i < 30; i++) sockets.push(await openLive(s.base));
    await expect(openLive(s.base)).rejects.toThrow(/429/);
    sockets.pop()!.ws.close();
    await until(
      async () =>
        openLive(s.base)
          .then((c) => (sockets.push(c), true))
          .catch(() => false),
      Boolean,
      'a connection after one closed',
      5_000,
    );
  });

  it('the upgrade checks the origin (own origin, CORS allow-list) and the subprotocol', async () => {
    await expect(openLive(s.base, { origin: 'https://evil.example' })).rejects.toThrow(/403/);
    const own = await openLive(s.base, { origin: s.base });
    sockets.push(own);
    own.send({ type: 'ping' });
    await own.next((m) => m.type === 'pong');
    await expect(openLive(s.base, { protocol: 'other.v1' })).rejects.toThrow(/400/);
  });
});
