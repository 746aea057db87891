/**
 * End-to-end: the live-query routes against real servers (SPEC §7, §9, §13.11). Payloads on
 * connect and after each change, framing (SSE and NDJSON, heartbeats), denials before streaming,
 * the per-change pipeline (token expiry, row filter), hook-caused changes, fan-out to many
 * streams, caps, and the release of every subscription after abrupt disconnects.
 *
 * No timing assertions: every wait is for an event, with a generous timeout.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bearer, databaseArgs, ROOT, secret, startServer, type TestServer } from './helpers/server.js';
import { openStream as open, type Frame, type OpenOptions, type StreamClient } from './helpers/stream-client.js';
import { pause, until } from './helpers/poll.js';

const ADMIN = { email: 'streams-admin@example.com', password: 'admin-pass-1234' };
let s: TestServer;
let dataDir: string;
let admin: Record<string, string>;
let alice: { id: string; auth: Record<string, string> };
let bob: { id: string; auth: Record<string, string> };

/** Every stream a test opened; closed after each test so none outlives it. */
const opened: StreamClient[] = [];
async function stream(route: string, body: unknown, options?: OpenOptions, server: TestServer = s): Promise<StreamClient> {
  const c = await open(server.base, route, body, options);
  opened.push(c);
  return c;
}
afterEach(() => {
  for (const c of opened.splice(0)) c.close();
});

async function signUp(server: TestServer, table: string, email: string) {
  const r = await server.call('POST', '/auth/sign-up', { type: 'signUp', table, email, password: 'a long password' });
  expect(r.status, r.text).toBe(200);
  return { id: r.json.data.user.id as string, token: r.json.data.accessToken as string, auth: bearer(r.json.data.accessToken) };
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'tb-streams-'));
  const env = { JWT_SECRET: secret(), PASSWORD_SECRET: secret(), TABLEBASE_STREAM_HEARTBEAT_MS: '500', TABLEBASE_MAX_STREAMS_PER_IP: '1000' };
  // The admin row must exist before the server opens the database (it reads /dashboard/metrics).
  const args = [
    'bin/tablebase.mjs',
    'admin',
    'create',
    '--project',
    'examples/conformance',
    '--data',
    dataDir,
    ...(await databaseArgs(dataDir)),
    '--table',
    'admins',
    '--email',
    ADMIN.email,
    '--password',
    ADMIN.password,
  ];
  await promisify(execFile)(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, timeout: 60_000 });
  s = await startServer({ dataDir, env });
  const a = await s.call('POST', '/auth/sign-in', { type: 'signIn', table: 'admins', ...ADMIN });
  expect(a.status, a.text).toBe(200);
  admin = bearer(a.json.data.accessToken);
  [alice, bob] = await Promise.all([signUp(s, 'users', 'alice.streams@example.com'), signUp(s, 'users', 'bob.streams@example.com')]);
});
afterAll(async () => {
  await s?.dispose();
  rmSync(dataDir, { recursive: true, force: true });
});

let seq = 0;
/** A title no other test uses, so each test sees only its own rows. */
const tag = () => `s${Date.now().toString(36)}${seq++}`;
const data = (f: Frame) => f.json.data;

async function write(method: string, path: string, body: unknown, headers?: Record<string, string>): Promise<any> {
  const r = await s.call(method, path, body, headers);
  expect(r.status, r.text).toBeLessThan(300);
  return r.json?.data;
}
const createTask = (object: Record<string, unknown>) => write('POST', '/db', { table: 'tasks', object });

const openStreams = async (): Promise<number> => {
  const r = await s.get('/dashboard/metrics', {}, admin);
  expect(r.status, r.text).toBe(200);
  return r.json.data.streams.open;
};

/** Runs `fn` over `items` with at most `width` in flight. */
async function inBatches<T, R>(items: T[], width: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width) out.push(...(await Promise.all(items.slice(i, i + width).map((x, j) => fn(x, i + j)))));
  return out;
}

describe('payloads on connect and after each change', () => {
  it('stream-one: null while no row matches, then the row, its updates, and null after delete', async () => {
    const t = tag();
    const c = await stream('/db/stream', { table: 'tasks', where: { title: { eq: t } } });
    expect(c.status).toBe(200);
    expect(data(await c.next())).toBeNull();
    const row = await createTask({ title: t, priority: 1 });
    expect(data(await c.next())).toEqual(row);
    const updated = await write('PATCH', '/db', { table: 'tasks', where: { id: { eq: row.id } }, updates: [{ column: 'priority', value: 5 }] }, alice.auth);
    const f = data(await c.next());
    expect(f).toEqual(updated);
    expect(f.priority).toBe(5);
    await write('DELETE', '/db', { table: 'tasks', where: { id: { eq: row.id } } }, alice.auth);
    expect(data(await c.next())).toBeNull();
  });

  it('stream-list: the page and its total, following where, order_by, limit and offset', async () => {
    const t = tag();
    const c = await stream('/db/stream/list', { table: 'tasks', where: { title: { startsWith: t } }, order_by: [{ column: 'priority', direction: 'desc' }], limit: 2 });
    expect(data(await c.next())).toEqual({ items: [], total: 0 });
    const p1 = await createTask({ title: `${t} one`, priority: 1 });
    expect(data(await c.next())).toEqual({ items: [p1], total: 1 });
    const p3 = await createTask({ title: `${t} three`, priority: 3 });
    expect(data(await c.next())).toEqual({ items: [p3, p1], total: 2 });
    const p2 = await createTask({ title: `${t} two`, priority: 2 });
    expect(data(await c.next())).toEqual({ items: [p3, p2], total: 3 });
    await write('DELETE', '/db', { table: 'tasks', where: { id: { eq: p3.id } } }, alice.auth);
    expect(data(await c.next())).toEqual({ items: [p2, p1], total: 2 });

    const paged = await stream('/db/stream/list', { table: 'tasks', where: { title: { startsWith: t } }, order_by: [{ column: 'priority' }], limit: 1, offset: 1 });
    expect(data(await paged.next())).toEqual({ items: [p2], total: 2 });
  });

  it('stream-count: the count after each create, delete many and update that moves rows in or out', async () => {
    const t = tag();
    const c = await stream('/db/stream/count', { table: 'tasks', where: { title: { eq: t }, isComplete: { eq: false } } });
    expect(data(await c.next())).toBe(0);
    const a = await createTask({ title: t });
    expect(data(await c.next())).toBe(1);
    await write('POST', '/db/many', { table: 'tasks', objects: [{ title: t }, { title: t }] });
    expect(data(await c.next())).toBe(3);
    await write('PATCH', '/db', { table: 'tasks', where: { id: { eq: a.id } }, updates: [{ column: 'isComplete', value: true }] }, alice.auth);
    expect(data(await c.next())).toBe(2);
    await write('DELETE', '/db/many', { table: 'tasks', where: { title: { eq: t } } }, alice.auth);
    expect(data(await c.next())).toBe(0);
  });

  it('streams a view: a write to a table it reads reaches the view stream', async () => {
    const t = tag();
    const c = await stream('/db/stream/list', { table: 'task_board', where: { title: { eq: t } } });
    expect(data(await c.next())).toEqual({ items: [], total: 0 });
    const row = await createTask({ title: t });
    expect(data(await c.next())).toEqual({ items: [{ id: row.id, title: t, isComplete: false, ownerEmail: null }], total: 1 });
    await write('PATCH', '/db', { table: 'tasks', where: { id: { eq: row.id } }, updates: [{ column: 'isComplete', value: true }] }, alice.auth);
    expect(data(await c.next()).items[0].isComplete).toBe(true);
  });

  it('pushes nothing for unrelated writes or for a change that leaves the result as it was', async () => {
    const t = tag();
    const first = await createTask({ title: t, priority: 1 });
    const one = await stream('/db/stream', { table: 'tasks', where: { title: { eq: t } } });
    const list = await stream('/db/stream/list', { table: 'tasks', where: { title: { eq: t } } });
    const count = await stream('/db/stream/count', { table: 'tasks', where: { title: { eq: t } } });
    for (const c of [one, list, count]) await c.next();
    // Other rows of the same table, other tables, and an update to a row the where does not hold.
    const other = await createTask({ title: `${t}-other` });
    await write('PATCH', '/db', { table: 'tasks', where: { id: { eq: other.id } }, updates: [{ column: 'priority', value: 9 }] }, alice.auth);
    await write('POST', '/db', { table: 'events', object: { title: t } });
    await write('POST', '/db', { table: 'big', object: { payload: t } });
    // A row inside the where changes in a way the count does not see.
    await write('PATCH', '/db', { table: 'tasks', where: { id: { eq: first.id } }, updates: [{ column: 'priority', value: 2 }] }, alice.auth);
    expect(data(await one.next()).priority).toBe(2);
    expect(data(await list.next()).items[0].priority).toBe(2);
    // The count's next payload must be the one the next create causes, not one per write above.
    await createTask({ title: t });
    expect(data(await count.next())).toBe(2);
    expect(count.frames).toHaveLength(2);
  });
});

describe('framing', () => {
  it('SSE: headers, `id: n` + `data:` frames with increasing ids, and `: ping` heartbeats', async () => {
    const t = tag();
    const c = await stream('/db/stream/count', { table: 'tasks', where: { title: { eq: t } } });
    expect(c.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(c.headers['cache-control']).toBe('no-cache');
    expect(c.headers['x-accel-buffering']).toBe('no');
    await c.next();
    await createTask({ title: t });
    await c.next();
    await c.whenHeartbeats(1);
    expect(c.raw.startsWith('id: 1\ndata: {"data":0}\n\n')).toBe(true);
    expect(c.raw).toContain('id: 2\ndata: {"data":1}\n\n');
    expect(c.raw).toContain(': ping\n\n');
    expect(c.frames.map((f) => f.id)).toEqual(['1', '2']);
  });

  it('is SSE for Accept: */* too', async () => {
    const c = await stream('/db/stream/count', { table: 'tasks', where: {} }, { headers: { accept: '*/*' } });
    expect(c.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(typeof data(await c.next())).toBe('number');
  });

  it('NDJSON with Accept: application/x-ndjson: one document per line, empty lines as heartbeats', async () => {
    const t = tag();
    const c = await stream('/db/stream/list', { table: 'tasks', where: { title: { eq: t } } }, { format: 'ndjson' });
    expect(c.headers['content-type']).toMatch(/^application\/x-ndjson/);
    expect(c.headers['cache-control']).toBe('no-cache');
    expect(c.headers['x-accel-buffering']).toBe('no');
    expect(data(await c.next())).toEqual({ items: [], total: 0 });
    const row = await createTask({ title: t });
    expect(data(await c.next())).toEqual({ items: [row], total: 1 });
    await c.whenHeartbeats(1);
    // Every line is one JSON document or empty (a heartbeat may fall between payloads).
    expect(c.raw).toMatch(/^(\{[^\n]*\}\n|\n)+$/);
    const docs = c.raw.split('\n').filter((l) => l !== '');
    expect(docs.map((l) => JSON.parse(l))).toEqual([{ data: { items: [], total: 0 } }, { data: { items: [row], total: 1 } }]);
    expect(c.raw).toContain('}\n\n');
  });
});

describe('denials answer ordinary JSON before streaming', () => {
  const expectError = (c: StreamClient, status: number, code: string) => {
    expect(c.status, c.raw).toBe(status);
    expect(c.headers['content-type']).toMatch(/^application\/json/);
    expect(c.json.error.code).toBe(code);
    expect(c.frames).toHaveLength(0);
  };
  const whenDone = async (c: StreamClient) => {
    await c.whenEnded();
    return c;
  };

  it('403 when a table rule denies, and when the first result fails the row filter', async () => {
    for (const route of ['/db/stream', '/db/stream/list', '/db/stream/count']) {
      expectError(await whenDone(await stream(route, { table: 'secrets', where: {} })), 403, 'FORBIDDEN');
      expectError(await whenDone(await stream(route, { table: 'notes', where: {} })), 403, 'FORBIDDEN');
    }
    expectError(await whenDone(await stream('/db/stream/list', { table: 'users', where: {} }, { headers: alice.auth })), 403, 'FORBIDDEN');
    const note = await write('POST', '/db', { table: 'notes', object: { body: tag() } }, alice.auth);
    expectError(await whenDone(await stream('/db/stream', { table: 'notes', where: { id: { eq: note.id } } }, { headers: bob.auth })), 403, 'FORBIDDEN');
    expectError(await whenDone(await stream('/db/stream', { table: 'tasks', where: {} }, { headers: { authorization: 'Bearer nope' } })), 401, 'INVALID_TOKEN');
  });

  it('400 for a bad body and 404 for an unknown table', async () => {
    const bad = [
      ['/db/stream', { table: 'tasks' }],
      ['/db/stream', { table: 'tasks', where: { nope: { eq: 1 } } }],
      ['/db/stream/list', { table: 'tasks', where: { title: { like: 'x' } } }],
      ['/db/stream/list', { table: 'tasks', limit: 5000 }],
      ['/db/stream/count', { where: {} }],
    ] as const;
    for (const [route, body] of bad) expectError(await whenDone(await stream(route, body)), 400, 'BAD_REQUEST');
    const unparsable = await fetch(`${s.base}/db/stream/list?body=%7Bnot-json`);
    expect(unparsable.status).toBe(400);
    expect((await unparsable.json()).error.code).toBe('BAD_REQUEST');
    expectError(await whenDone(await stream('/db/stream/list', { table: 'no_such_table' })), 404, 'NOT_FOUND');
  });

  it('429 over the list policy, which streams share with /db/list (SPEC §9)', async () => {
    const t = tag();
    for (let i = 0; i < 2; i++) expect((await s.get('/db/list', { table: 'limited', where: { title: { eq: t } } })).status).toBe(200);
    const third = await stream('/db/stream/list', { table: 'limited', where: { title: { eq: t } } });
    expect(third.status).toBe(200);
    const fourth = await whenDone(await stream('/db/stream/list', { table: 'limited', where: { title: { eq: t } } }));
    expectError(fourth, 429, 'RATE_LIMITED');
    expect(Number(fourth.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });
});

describe('the pipeline runs again on each change', () => {
  it('a row that now fails the row filter ends the stream with one error event', async () => {
    const t = tag();
    const sse = await stream('/db/stream/list', { table: 'notes', where: { body: { eq: t } } }, { headers: bob.auth });
    const nd = await stream('/db/stream/list', { table: 'notes', where: { body: { eq: t } } }, { headers: bob.auth, format: 'ndjson' });
    expect(data(await sse.next())).toEqual({ items: [], total: 0 });
    expect(data(await nd.next())).toEqual({ items: [], total: 0 });
    await write('POST', '/db', { table: 'notes', object: { body: t } }, alice.auth);
    const err = await sse.next();
    expect(err.event).toBe('error');
    expect(err.json.error.code).toBe('FORBIDDEN');
    expect((await nd.next()).json.error.code).toBe('FORBIDDEN');
    await sse.whenEnded();
    await nd.whenEnded();
    expect(sse.raw).toMatch(/event: error\ndata: \{"error":\{"code":"FORBIDDEN"[^\n]*\}\n\n$/);
  });

  it('a token revoked by logout ends the stream with INVALID_TOKEN at the next change', async () => {
    const t = tag();
    const carol = await signUp(s, 'users', `carol.${t}@example.com`);
    const c = await stream('/db/stream/count', { table: 'tasks', where: { title: { eq: t } } }, { headers: carol.auth });
    expect(data(await c.next())).toBe(0);
    await createTask({ title: t });
    expect(data(await c.next())).toBe(1);
    const out = await s.call('POST', '/auth/logout', undefined, carol.auth);
    expect(out.status, out.text).toBe(204);
    await createTask({ title: t });
    const err = await c.next();
    expect(err.event).toBe('error');
    expect(err.json.error.code).toBe('INVALID_TOKEN');
    await c.whenEnded();
    // A stream without a token on the same query is unaffected.
    const anon = await stream('/db/stream/count', { table: 'tasks', where: { title: { eq: t } } });
    expect(data(await anon.next())).toBe(2);
  });

  it('changes made by after-hooks reach streams of the table they write', async () => {
    const creates = await stream('/db/stream/list', { table: 'audit', where: { action: { eq: 'create' } }, order_by: [{ column: 'createdAt', direction: 'desc' }], limit: 5 });
    await creates.next();
    const ev = await write('POST', '/db', { table: 'events', object: { title: tag() } });
    const f = await creates.nextWhere((x) => data(x).items.some((a: any) => a.ref === ev.id));
    expect(data(f).items.find((a: any) => a.ref === ev.id)).toMatchObject({ action: 'create', ref: ev.id });

    const trail = await stream('/db/stream/list', { table: 'audit', where: { ref: { eq: ev.id } }, order_by: [{ column: 'createdAt' }] });
    await trail.nextWhere((x) => data(x).total === 1);
    await write('PATCH', '/db', { table: 'events', where: { id: { eq: ev.id } }, updates: [{ column: 'kind', value: 'x' }] });
    await trail.nextWhere((x) => data(x).total === 2);
    await write('DELETE', '/db', { table: 'events', where: { id: { eq: ev.id } } });
    const last = await trail.nextWhere((x) => data(x).total === 3);
    expect(data(last).items.map((a: any) => a.action)).toEqual(['create', 'update', 'delete']);
  });
});

describe('many streams', () => {
  it('200 concurrent streams of all three kinds all receive the update', async () => {
    const t = tag();
    const kinds = ['/db/stream', '/db/stream/list', '/db/stream/count'] as const;
    // Half share one query per kind; the other half each have a distinct where.
    const clients = await inBatches(
      Array.from({ length: 200 }, (_, i) => i),
      50,
      async (i) => {
        const where = i % 2 === 0 ? { title: { eq: t } } : { title: { eq: t }, priority: { gte: -i } };
        const c = await stream(kinds[i % 3]!, { table: 'tasks', where }, { format: i % 4 < 2 ? 'sse' : 'ndjson' });
        expect(c.status).toBe(200);
        await c.next();
        return { c, kind: kinds[i % 3]! };
      },
    );
    const row = await createTask({ title: t });
    const got = await Promise.all(clients.map(({ c }) => c.next(60_000)));
    got.forEach((f, i) => {
      const kind = clients[i]!.kind;
      if (kind === '/db/stream') expect(data(f)).toEqual(row);
      else if (kind === '/db/stream/list') expect(data(f)).toEqual({ items: [row], total: 1 });
      else expect(data(f)).toBe(1);
    });
  });

  it('after 500 abrupt disconnects the open-stream count returns to zero', async () => {
    await until(openStreams, (n) => n === 0, 'no open streams before the test');
    const t = tag();
    const kinds = ['/db/stream', '/db/stream/list', '/db/stream/count'];
    const clients = await inBatches(
      Array.from({ length: 500 }, (_, i) => i),
      50,
      async (i) => {
        const where = i % 5 === 0 ? { title: { eq: t } } : { title: { eq: t }, priority: { lte: i } };
        const c = await open(s.base, kinds[i % 3]!, { table: 'tasks', where }, { format: i % 2 ? 'ndjson' : 'sse' });
        expect(c.status).toBe(200);
        await c.next();
        return c;
      },
    );
    expect(await openStreams()).toBe(500);
    // Leave rudely: most with a TCP reset, the rest by dropping the socket; some while a payload
    // is on its way to them.
    const pending = createTask({ title: t });
    clients.forEach((c, i) => (i % 4 === 0 ? c.close() : c.abort()));
    await pending;
    await until(openStreams, (n) => n === 0, 'every subscription to be released');
    // The server still streams and writes normally afterwards.
    const after = await stream('/db/stream/count', { table: 'tasks', where: { title: { eq: t } } });
    expect(data(await after.next())).toBe(1);
    await createTask({ title: t });
    expect(data(await after.next())).toBe(2);
    expect(await openStreams()).toBe(1);
  });
});

describe('caps on open streams (SPEC §7, §13.11)', () => {
  let capped: TestServer;
  beforeAll(async () => {
    capped = await startServer({ env: { TABLEBASE_MAX_STREAMS_PER_IP: '2', TABLEBASE_MAX_STREAMS: '3' } });
  });
  afterAll(async () => {
    await capped?.dispose();
  });
  const from = (ip: string) => stream('/db/stream/count', { table: 'tasks', where: {} }, { localAddress: ip }, capped);

  it('answers 429 RATE_LIMITED over the per-IP and the server-wide cap, and admits again after a close', async () => {
    const a1 = await from('127.0.0.1');
    const a2 = await from('127.0.0.1');
    expect([a1.status, a2.status]).toEqual([200, 200]);
    const a3 = await from('127.0.0.1');
    await a3.whenEnded();
    expect(a3.status).toBe(429);
    expect(a3.json.error.code).toBe('RATE_LIMITED');
    const b1 = await from('127.0.0.2');
    expect(b1.status).toBe(200);
    const c1 = await from('127.0.0.3');
    await c1.whenEnded();
    expect(c1.status).toBe(429);
    expect(c1.json.error.code).toBe('RATE_LIMITED');
    a1.close();
    const c2 = await until(
      () => from('127.0.0.3'),
      (c) => c.status === 200,
      'a freed slot',
    );
    expect(data(await c2.next())).toBe(0);
  });
});

/** The `exp` claim (seconds) of a JWT. */
const expOf = (token: string): number => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).exp;

describe('token expiry (SPEC §7)', () => {
  let short: TestServer;
  beforeAll(async () => {
    short = await startServer({ project: join(ROOT, 'test/fixtures/short-token') });
  });
  afterAll(async () => {
    await short?.dispose();
  });

  it('an expired token ends the stream with one error event at the next change', async () => {
    const member = await signUp(short, 'members', 'member@example.com');
    expect(expOf(member.token) - Math.floor(Date.now() / 1000)).toBeLessThanOrEqual(2);
    expect((await stream('/db/stream/list', { table: 'docs' }, {}, short).then((c) => c.whenEnded().then(() => c))).status).toBe(403);
    // A fresh token for the streams: the sign-up's may be near its end on a slow machine.
    const signIn = async () => {
      const r = await short.call('POST', '/auth/sign-in', { type: 'signIn', table: 'members', email: 'member@example.com', password: 'a long password' });
      expect(r.status, r.text).toBe(200);
      return r.json.data.accessToken as string;
    };
    let sse: StreamClient | undefined;
    let nd: StreamClient | undefined;
    let expMs = 0;
    for (let attempt = 0; attempt < 5 && !(sse?.status === 200 && nd?.status === 200); attempt++) {
      const token = await signIn();
      expMs = expOf(token) * 1000;
      [sse, nd] = await Promise.all([
        stream('/db/stream/list', { table: 'docs' }, { headers: bearer(token) }, short),
        stream('/db/stream/count', { table: 'docs' }, { headers: bearer(token), format: 'ndjson' }, short),
      ]);
    }
    expect([sse!.status, nd!.status]).toEqual([200, 200]);
    expect(data(await sse!.next())).toEqual({ items: [], total: 0 });
    expect(data(await nd!.next())).toBe(0);
    // Wait out the token, then change the result.
    while (Date.now() <= expMs + 200) await pause(100);
    const r = await short.call('POST', '/db', { table: 'docs', object: { title: 'after expiry' } });
    expect(r.status, r.text).toBe(200);
    const err = await sse!.next();
    expect(err.event).toBe('error');
    expect(err.json.error.code).toBe('INVALID_TOKEN');
    expect((await nd!.next()).json.error.code).toBe('INVALID_TOKEN');
    await sse!.whenEnded();
    await nd!.whenEnded();
    expect(sse!.frames).toHaveLength(2);
  });
});
