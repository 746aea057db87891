/**
 * The one lifecycle, family-independent (docs/lifecycle.md): over a real loopback server with two
 * made-up declared routes, stage order (429 → 401/403 → 400 → handler), the headers set on the
 * way, and every answer kind a handler can return.
 */
import { Type } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../core/errors.js';
import { createLogger } from '../core/logger.js';
import { Metrics } from '../core/metrics.js';
import type { Jwt } from '../define/types.js';
import { defineRoute, empty, noContent, raw, redirect, stream } from './declare.js';
import { Router } from './router.js';
import { createServer, type AppServer } from './server.js';
import type { Services } from './services.js';

let limited = false;
const hits: string[] = [];
const limiter = {
  enforce(ip: string, table: string, op: string) {
    hits.push(`${table}:${op}`);
    if (limited) throw new ApiError('RATE_LIMITED', undefined, { headers: { 'Retry-After': '7' } });
    return { 'RateLimit-Limit': '5', 'RateLimit-Remaining': '4', 'RateLimit-Reset': '60' };
  },
};
const jwtOf = (userId: string, isAdmin: boolean) => ({ userId, table: 'users', exp: 0, ...(isAdmin ? { admin: { isAdmin: true } } : {}) }) as unknown as Jwt;
const tokens = {
  verify(authorization: string | undefined) {
    if (authorization === undefined) return null;
    if (authorization === 'Bearer admin') return jwtOf('ad_1', true);
    if (authorization === 'Bearer user') return jwtOf('us_1', false);
    throw new ApiError('INVALID_TOKEN');
  },
};

const routes = [
  defineRoute({
    method: 'POST',
    path: '/t',
    family: 'system',
    summary: 'admin, limited, validated',
    access: 'admin',
    rateLimit: { table: 't', op: 'double' },
    body: Type.Object({ n: Type.Integer() }, { additionalProperties: false }),
    responses: { 200: Type.Object({ n: Type.Integer() }) },
    handler: ({ body }) => ({ n: body.n * 2 }),
  }),
  defineRoute({
    method: 'GET',
    path: '/t/:kind',
    family: 'system',
    summary: 'every answer kind',
    access: 'optional',
    params: Type.Object({ kind: Type.String() }),
    query: Type.Object({ q: Type.Optional(Type.String({ maxLength: 3 })) }),
    responses: { 200: Type.Unknown() },
    handler: ({ params, query, jwt }) => {
      switch (params.kind) {
        case 'none':
          return noContent();
        case 'empty':
          return empty();
        case 'redirect':
          return redirect('/elsewhere');
        case 'raw':
          return raw(200, { 'content-type': 'text/plain; charset=utf-8' }, 'plain');
        case 'stream':
          return stream((sink) => {
            sink.start(200, { 'content-type': 'text/plain' });
            sink.write('a');
            sink.end('b');
          });
        default:
          return { kind: params.kind, q: query.q ?? null, user: jwt?.userId ?? null };
      }
    },
  }),
];

let server: AppServer;
let base: string;
beforeAll(async () => {
  const services = { rt: { limiter, tokens }, config: { maxBodyBytes: 1024, streamHeartbeatMs: 15_000 } } as unknown as Services;
  server = createServer({ router: new Router(routes), services, corsOrigins: [], clientIp: (a) => a, log: createLogger('silent'), metrics: new Metrics() });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const post = (body: unknown, token?: string) =>
  fetch(`${base}/t`, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
const code = async (r: Response) => ((await r.json()) as { error: { code: string } }).error.code;

describe('stage order', () => {
  it('429 comes first: before the token, the access check and the body shape', async () => {
    limited = true;
    try {
      const r = await post({ n: 'not a number' });
      expect(r.status).toBe(429);
      expect(r.headers.get('retry-after')).toBe('7');
    } finally {
      limited = false;
    }
  });

  it('then the token: 401 without one, with the RateLimit-* headers already set', async () => {
    const r = await post({ n: 1 });
    expect([r.status, await code(r)]).toEqual([401, 'UNAUTHENTICATED']);
    expect(r.headers.get('ratelimit-limit')).toBe('5');
    expect(r.headers.get('x-request-id')).toBeTruthy();
  });

  it('then access: 403 for a non-admin before any body-shape error (docs/reference/rules-and-hooks.md)', async () => {
    const r = await post({ n: 'not a number' }, 'user');
    expect([r.status, await code(r)]).toEqual([403, 'FORBIDDEN']);
  });

  it('then the schema: 400 with JSON-pointer details; then the handler', async () => {
    const bad = await post({ n: 'x', extra: true }, 'admin');
    expect(bad.status).toBe(400);
    const details = ((await bad.json()) as { error: { details: { path: string }[] } }).error.details.map((d) => d.path).sort();
    expect(details).toEqual(['/extra', '/n']);
    const ok = await post({ n: 2 }, 'admin');
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ data: { n: 4 } });
    expect(hits.at(-1)).toBe('t:double');
  });

  it('an optional route verifies a sent token (401 when bad) and hands the caller to the handler', async () => {
    expect((await fetch(`${base}/t/x`, { headers: { authorization: 'Bearer bad' } })).status).toBe(401);
    expect(await (await fetch(`${base}/t/x?q=abc`, { headers: { authorization: 'Bearer user' } })).json()).toEqual({ data: { kind: 'x', q: 'abc', user: 'us_1' } });
    expect(await (await fetch(`${base}/t/x`)).json()).toEqual({ data: { kind: 'x', q: null, user: null } });
    expect((await fetch(`${base}/t/x?q=toolong`)).status).toBe(400);
  });

  it('a known path with another method is 405 with Allow', async () => {
    const r = await fetch(`${base}/t`, { method: 'DELETE' });
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('POST');
  });
});

describe('answers', () => {
  it('noContent, empty, redirect, raw and stream', async () => {
    const none = await fetch(`${base}/t/none`);
    expect([none.status, await none.text()]).toEqual([204, '']);
    const e = await fetch(`${base}/t/empty`);
    expect([e.status, e.headers.get('content-length'), await e.text()]).toEqual([200, '0', '']);
    const r = await fetch(`${base}/t/redirect`, { redirect: 'manual' });
    expect([r.status, r.headers.get('location')]).toEqual([302, '/elsewhere']);
    const t = await fetch(`${base}/t/raw`);
    expect([t.status, t.headers.get('content-type'), await t.text()]).toEqual([200, 'text/plain; charset=utf-8', 'plain']);
    const s = await fetch(`${base}/t/stream`);
    expect([s.status, await s.text()]).toEqual([200, 'ab']);
  });
});
