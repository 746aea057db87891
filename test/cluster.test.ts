/**
 * Two nodes of one deployment on loopback (issue #15, docs/reference/scaling.md): one PostgreSQL database, one
 * Redis (reached through a small TCP relay the test can cut, to play "Redis killed"), the same
 * secrets, separate data folders.
 */
import { randomBytes } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../src/storage/postgres/test-database.js';
import { until, pause } from './helpers/poll.js';
import { bearer, freePort, secret, startServer, type Envelope, type TestServer } from './helpers/server.js';
import { openStream, type Frame } from './helpers/stream-client.js';

/** A TCP relay to the real Redis that can be cut (every socket reset) and restored. */
async function redisRelay(port: number) {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  const start = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = connect(6379, '127.0.0.1');
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => {});
        }
        client.pipe(upstream).pipe(client);
      });
      server.listen(port, '127.0.0.1', () => resolve());
    });
  await start();
  return {
    cut: async () => {
      await new Promise<void>((r) => server!.close(() => r()) && sockets.forEach((s) => s.destroy()));
    },
    restore: start,
    close: async () => {
      sockets.forEach((s) => s.destroy());
      await new Promise<void>((r) => server!.close(() => r()));
    },
  };
}

let db: TestDatabase;
let relay: Awaited<ReturnType<typeof redisRelay>>;
let a: TestServer;
let b: TestServer;
const env = { JWT_SECRET: secret(), PASSWORD_SECRET: secret(), REDIS_PREFIX: `tb-cluster:${randomBytes(6).toString('hex')}:` };
let args: string[];
const node = () => startServer({ env, args });

beforeAll(async () => {
  db = await createTestDatabase();
  const port = await freePort();
  relay = await redisRelay(port);
  args = ['--database', db.url, '--redis', `redis://127.0.0.1:${port}`];
  a = await node();
  b = await node();
}, 120_000);
afterAll(async () => {
  await a?.dispose();
  await b?.dispose();
  await relay?.close();
  await db?.drop();
});

const create = async (s: TestServer, title: string) => {
  const r = await s.call<{ data: { id: string; title: string } }>('POST', '/db', { table: 'events', object: { title } });
  expect(r.status, r.text).toBe(200);
  return r.json.data;
};
const ids = (f: { json: Envelope }) => f.json.data.items.map((r) => r.id);
/** A count stream's payload. */
const counted = (f: Frame): unknown => f.json.data;

describe('two nodes, one deployment', { timeout: 180_000 }, () => {
  it('a stream on B sees a write on A, and a stream on A a write on B', async () => {
    const t = `x${Date.now()}`;
    const onB = await openStream(b.base, '/db/stream/list', { table: 'events', where: { title: { startsWith: t } } });
    const onA = await openStream(a.base, '/db/stream/list', { table: 'events', where: { title: { startsWith: t } } });
    expect(ids(await onB.next())).toEqual([]);
    expect(ids(await onA.next())).toEqual([]);
    const first = await create(a, `${t}-1`);
    expect(ids(await onB.next(5000))).toEqual([first.id]);
    const second = await create(b, `${t}-2`);
    expect(ids(await onA.nextWhere((f) => ids(f).length === 2, 5000))).toEqual([first.id, second.id]);
    onA.close();
    onB.close();
  });

  it('counts a client’s rate limit on both nodes', async () => {
    const statuses = [];
    for (const s of [a, b, a, b]) statuses.push((await s.get('/db/count', { table: 'limited' })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it('refuses on B, within a second, a token logged out on A', async () => {
    const email = `c${Date.now()}@example.com`;
    const up = await a.call('POST', '/auth/sign-up', { type: 'signUp', table: 'users', email, password: 'cluster-pass-1' });
    expect(up.status, up.text).toBe(200);
    const { accessToken, user } = up.json.data;
    const own = (s: TestServer) => s.get('/db', { table: 'users', where: { id: { eq: user.id } } }, bearer(accessToken));
    expect((await own(b)).status).toBe(200);
    expect((await a.call('POST', '/auth/logout', undefined, bearer(accessToken))).status).toBe(204);
    const started = Date.now();
    await until(
      () => own(b),
      (r) => r.status === 401,
      'B refuses the token',
      1000,
      20,
    );
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('runs each cron tick once across the nodes', async () => {
    // The conformance heartbeat runs every 2 s; both nodes schedule it.
    await pause(6500);
    const r = await a.get<{ data: { items: { createdAt: string }[] } }>('/db/list', { table: 'cron_log', limit: 1000, order_by: [{ column: 'createdAt' }] });
    expect(r.status, r.text).toBe(200);
    const seconds = r.json.data.items.map((x) => Math.floor(Date.parse(x.createdAt) / 2000));
    expect(seconds.length).toBeGreaterThanOrEqual(3);
    expect(new Set(seconds).size).toBe(seconds.length);
  });

  it('Redis cut: degraded health, writes continue; restored: streams catch up', async () => {
    const t = `r${Date.now()}`;
    const onB = await openStream(b.base, '/db/stream/count', { table: 'events', where: { title: { startsWith: t } } });
    expect((await onB.next()).json.data).toBe(0);
    await relay.cut();
    await until(
      () => a.call('GET', '/health'),
      (r) => r.json?.data?.status === 'degraded',
      'A reports degraded',
      10_000,
    );
    const h = await a.call('GET', '/health');
    expect(h.status).toBe(200);
    expect(h.json.data).toEqual({ status: 'degraded', redis: 'down' });
    await create(a, `${t}-during`);
    await relay.restore();
    // B missed the notice; once its subscriber is back it re-runs its live queries.
    expect(counted(await onB.nextWhere((f) => counted(f) === 1, 15_000))).toBe(1);
    await until(
      () => a.call('GET', '/health'),
      (r) => r.json?.data?.status === 'ok',
      'A healthy again',
      10_000,
    );
    await create(a, `${t}-after`);
    expect(counted(await onB.nextWhere((f) => counted(f) === 2, 5000))).toBe(2);
    onB.close();
  });

  it('serves on B a photo uploaded on A, thumbnails too, and deletes it everywhere', async () => {
    const up = await a.call('POST', '/auth/sign-up', { type: 'signUp', table: 'users', email: `p${Date.now()}@example.com`, password: 'cluster-pass-1' });
    const token = up.json.data.accessToken as string;
    const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 10, g: 200, b: 30 } } })
      .png()
      .toBuffer();
    const r = await fetch(`${a.base}/img`, { method: 'POST', body: new Uint8Array(png), headers: { 'content-type': 'image/png', ...bearer(token) } });
    expect(r.status).toBe(200);
    const { id } = (await r.json()).data as { id: string };
    const onB = await fetch(`${b.base}/img/${id}`);
    expect(onB.status).toBe(200);
    expect(Buffer.from(await onB.arrayBuffer()).equals(png)).toBe(true);
    const thumbB = await fetch(`${b.base}/img/${id}?thumb=16x16`);
    expect(thumbB.status).toBe(200);
    const thumbA = await fetch(`${a.base}/img/${id}?thumb=16x16`);
    expect(Buffer.from(await thumbA.arrayBuffer()).equals(Buffer.from(await thumbB.arrayBuffer()))).toBe(true);
    expect((await fetch(`${b.base}/img/${id}`, { method: 'DELETE', headers: bearer(token) })).status).toBe(204);
    expect((await fetch(`${a.base}/img/${id}`)).status).toBe(404);
  });

  it('kill -9 of A loses no answered write', async () => {
    const t = `k${Date.now()}`;
    const acked: string[] = [];
    let stop = false;
    const writers = Array.from({ length: 8 }, async () => {
      while (!stop) {
        try {
          const r = await a.call('POST', '/db', { table: 'events', object: { title: t } });
          if (r.status === 200) acked.push(r.json.data.id);
        } catch {
          return; // the node is gone
        }
      }
    });
    await until(
      async () => acked.length,
      (n) => n >= 50,
      'some writes answered',
      20_000,
      20,
    );
    a.proc.kill('SIGKILL');
    stop = true;
    await Promise.all(writers);
    const r = await b.get('/db/list', { table: 'events', where: { title: { eq: t } }, limit: 1000 });
    const stored = new Set((r.json.data.items as { id: string }[]).map((x) => x.id));
    for (const id of acked) expect(stored.has(id), id).toBe(true);
    a = await node();
  });
});
