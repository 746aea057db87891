/**
 * End-to-end: live queries at scale and at their limits (docs/reference/live.md, docs/reference/rate-limits.md): fan-out to hundreds of
 * streams, the release of every subscription after abrupt disconnects, the caps on open streams,
 * and a token that expires while its streams are open.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useServer } from '../helpers/lifecycle.js';
import { data, useLiveWorld } from '../helpers/live.js';
import { pause, until } from '../helpers/poll.js';
import { tag as newTag } from '../helpers/rows.js';
import { bearer, ROOT } from '../helpers/server.js';
import { openStream as open, type StreamClient } from '../helpers/stream-client.js';
import { signIn, signUp } from '../helpers/users.js';

const w = useLiveWorld({ withAdmin: true });
const { stream, createTask, openStreams } = w;
const tag = () => newTag('s');

/** Runs `fn` over `items` with at most `width` in flight. */
async function inBatches<T, R>(items: T[], width: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width) out.push(...(await Promise.all(items.slice(i, i + width).map((x, j) => fn(x, i + j)))));
  return out;
}

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
        const c = await open(w.s.base, kinds[i % 3]!, { table: 'tasks', where }, { format: i % 2 ? 'ndjson' : 'sse' });
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

describe('caps on open streams (docs/reference/live.md, docs/reference/rate-limits.md)', () => {
  const capped = useServer({ env: { TABLEBASE_MAX_STREAMS_PER_IP: '2', TABLEBASE_MAX_STREAMS: '3' } });
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

describe('token expiry (docs/reference/live.md)', () => {
  const short = useServer({ project: join(ROOT, 'test/fixtures/short-token') });

  it('an expired token ends the stream with one error event at the next change', async () => {
    const member = await signUp(short, 'member@example.com', { table: 'members' });
    expect(expOf(member.accessToken) - Math.floor(Date.now() / 1000)).toBeLessThanOrEqual(2);
    expect((await stream('/db/stream/list', { table: 'docs' }, {}, short).then((c) => c.whenEnded().then(() => c))).status).toBe(403);
    // A fresh token for the streams: the sign-up's may be near its end on a slow machine.
    const signInAgain = async () => (await signIn(short, 'members', 'member@example.com')).accessToken;
    let sse: StreamClient | undefined;
    let nd: StreamClient | undefined;
    let expMs = 0;
    for (let attempt = 0; attempt < 5 && !(sse?.status === 200 && nd?.status === 200); attempt++) {
      const token = await signInAgain();
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
