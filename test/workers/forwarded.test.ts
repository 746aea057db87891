/**
 * A write a worker forwards to the primary (docs/reference/scaling.md) is answered exactly as a
 * single process answers it: status, body and the headers a client reads (X-Request-Id,
 * RateLimit-*, Retry-After, Content-Type), for success and for every refusal a write can get.
 * The same requests go to `--workers 1` and `--workers 2` on fresh data folders, in the same order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type Reply, type TestServer } from '../helpers/server.js';
import { pinWorkers, type Pinned } from './pin.js';

let single: TestServer;
let two: TestServer;
let pins: Pinned[] = [];
beforeAll(async () => {
  [single, two] = await Promise.all([startServer({ workers: 1 }), startServer({ workers: 2 })]);
  pins = await pinWorkers(two, 1);
}, 120_000);
afterAll(async () => {
  for (const p of pins) p.close();
  await Promise.all([single?.dispose(), two?.dispose()]);
});

const HEADERS = ['x-request-id', 'content-type', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'ratelimit-policy', 'retry-after'];
// Values that differ between any two servers: generated ids and times.
const VOLATILE = /"(id|createdAt|updatedAt|ref)":"[^"]*"/g;

function shape(r: Reply): { status: number; body: string; headers: Record<string, string | null> } {
  const headers: Record<string, string | null> = {};
  for (const h of HEADERS) headers[h] = r.headers.get(h);
  // RateLimit-Reset counts seconds down: equal within the second the two requests share.
  if (headers['ratelimit-reset'] !== null) headers['ratelimit-reset'] = 'present';
  return { status: r.status, body: r.text.replace(VOLATILE, '"$1":"…"'), headers };
}

let n = 0;
/** The same request to one process and through a worker of two; both answers, normalized. */
async function both(method: string, path: string, body: unknown): Promise<[ReturnType<typeof shape>, ReturnType<typeof shape>]> {
  const id = `fwd-test-${++n}`;
  const a = await single.call(method, path, body, { 'x-request-id': id });
  const b = await pins[0]!.call(method, path, body, { 'x-request-id': id });
  return [shape(a), shape(b)];
}

describe('a forwarded write answers what one process answers', { timeout: 60_000 }, () => {
  it('success (200 with the created row)', async () => {
    const [a, b] = await both('POST', '/db', { table: 'events', object: { title: 'hello' } });
    expect(a.status).toBe(200);
    expect(b).toEqual(a);
  });

  it('400 (unknown column)', async () => {
    const [a, b] = await both('POST', '/db', { table: 'events', object: { nope: 1 } });
    expect(a.status).toBe(400);
    expect(b).toEqual(a);
  });

  it('400 (a hook refuses: UserError from beforeCreate, run in the primary)', async () => {
    const [a, b] = await both('POST', '/db', { table: 'events', object: { title: 'forbidden' } });
    expect(a.status).toBe(400);
    expect(b).toEqual(a);
  });

  it('403 (no rule allows it)', async () => {
    const [a, b] = await both('POST', '/db', { table: 'secrets', object: { value: 'x' } });
    expect(a.status).toBe(403);
    expect(b).toEqual(a);
  });

  it('404 (a custom operation finds nothing)', async () => {
    const [a, b] = await both('PATCH', '/db/custom/bump', { table: 'limited', where: { title: { eq: 'none' } } });
    expect(a.status).toBe(404);
    expect(b).toEqual(a);
  });

  it('409 (a taken unique value)', async () => {
    const signUp = { type: 'signUp', table: 'users', email: 'twice@example.com', password: 'a-long-password-1' };
    const [a1, b1] = await both('POST', '/auth/sign-up', signUp);
    expect(a1.status).toBe(b1.status);
    const [a, b] = await both('POST', '/auth/sign-up', signUp);
    expect(a.status).toBe(409);
    expect(b).toEqual(a);
  });

  it('413 (a body past maxBodyBytes, which crosses over HTTP: too big for a frame)', async () => {
    // On the pinned kept-alive connection the next tests use too: it stays usable after the 413
    // (test/workers/early-answer.test.ts, issue #24).
    const body = { table: 'events', object: { title: 'x'.repeat(1024 * 1024 + 1) } };
    const a = shape(await single.call('POST', '/db', body, { 'x-request-id': 'fwd-413' }));
    const b = shape(await pins[0]!.call('POST', '/db', body, { 'x-request-id': 'fwd-413' }));
    expect(a.status).toBe(413);
    expect(b).toEqual(a);
  });

  it('a bodyless write (logout: a raw-body route) and its 401 once logged out', async () => {
    const signUp = (email: string) => ({ type: 'signUp', table: 'users', email, password: 'a-long-password-1' });
    const tokenOf = (r: Reply) => (r.json as unknown as { data: { accessToken: string } }).data.accessToken;
    const a = tokenOf(await single.call('POST', '/auth/sign-up', signUp('out-a@example.com')));
    const b = tokenOf(await pins[0]!.call('POST', '/auth/sign-up', signUp('out-b@example.com')));
    const outA = await single.call('POST', '/auth/logout', undefined, { authorization: `Bearer ${a}`, 'x-request-id': 'fwd-logout' });
    const outB = await pins[0]!.call('POST', '/auth/logout', undefined, { authorization: `Bearer ${b}`, 'x-request-id': 'fwd-logout' });
    expect(outA.status).toBe(204);
    expect(shape(outB)).toEqual(shape(outA));
    const againA = await single.call('POST', '/auth/logout', undefined, { authorization: `Bearer ${a}`, 'x-request-id': 'fwd-logout-2' });
    const againB = await pins[0]!.call('POST', '/auth/logout', undefined, { authorization: `Bearer ${b}`, 'x-request-id': 'fwd-logout-2' });
    expect(againA.status).toBe(401);
    expect(shape(againB)).toEqual(shape(againA));
  });

  it('429 with RateLimit-* (counted once per request, in the primary)', async () => {
    const answers: [ReturnType<typeof shape>, ReturnType<typeof shape>][] = [];
    for (let i = 0; i < 4; i++) answers.push(await both('POST', '/db', { table: 'limited', object: { title: `t${i}` } }));
    expect(answers.map(([a]) => a.status)).toEqual([200, 200, 200, 429]);
    for (const [a, b] of answers) expect(b).toEqual(a);
    expect(answers[3]![0].headers['ratelimit-remaining']).toBe('0');
  });
});
