/**
 * End-to-end: rate limiting at step 1 of the pipeline on the conformance project (docs/reference/rate-limits.md,
 * docs/reference/rate-limits.md): every operation's policy and the routes that share its counter, unlimited delete,
 * unknown custom names, and 429 before the body and before the rules. Every test speaks from its
 * own loopback address (test/helpers/ratelimit.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { useServer } from '../helpers/lifecycle.js';
import { expectAdmitted, expectLimited, freshIp, hit } from '../helpers/ratelimit.js';

describe('the conformance project (docs/reference/conformance.md `limited`: 3 per 10 s; update default; delete null; custom:bump 2 per 10 s)', () => {
  const s = useServer();
  let rowId: string;
  beforeAll(async () => {
    const r = await hit(s, freshIp(), 'POST', '/db/many', { table: 'limited', objects: [{ title: 'a' }, { title: 'b' }] });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    rowId = r.json.data[0]!.id;
  });

  const byId = () => ({ table: 'limited', where: { id: { eq: rowId } } });
  const all = { table: 'limited' };
  const page = { table: 'limited', limit: 1 };
  // Every operation → its policy, with every route (`METHOD path`: body) that shares the counter (docs/reference/rate-limits.md).
  const mapping: { op: string; limit: number; window: number; forms: Record<string, () => unknown> }[] = [
    { op: 'get', limit: 3, window: 10, forms: { 'GET /db': byId, 'GET /db/stream': byId } },
    { op: 'list', limit: 3, window: 10, forms: { 'GET /db/list': () => page, 'GET /db/stream/list': () => page } },
    { op: 'count', limit: 3, window: 10, forms: { 'GET /db/count': () => all, 'GET /db/stream/count': () => all } },
    { op: 'create', limit: 3, window: 10, forms: { 'POST /db': () => ({ ...all, object: { title: 'c' } }), 'POST /db/many': () => ({ ...all, objects: [{ title: 'c1' }, { title: 'c2' }] }) } },
    { op: 'custom:bump', limit: 2, window: 10, forms: { 'PATCH /db/custom/bump': byId, 'PATCH /db/custom/bump/many': byId } },
    // `update` has no override: the default 100 per minute.
    {
      op: 'update',
      limit: 100,
      window: 60,
      forms: { 'PATCH /db': () => ({ ...byId(), updates: [{ column: 'title', value: 'u' }] }), 'PATCH /db/many': () => ({ ...byId(), updates: [{ column: 'title', value: 'um' }] }) },
    },
  ];

  for (const { op, limit, window, forms } of mapping) {
    const routes = Object.entries(forms).map(([route, body]) => ({ route, method: route.split(' ')[0]!, path: route.split(' ')[1]!, body }));
    it(`${op}: ${routes.map((f) => f.route).join(' and ')} share one counter of ${limit}`, async () => {
      const ip = freshIp();
      for (let i = 0; i < limit; i++) {
        const { method, path, body } = routes[i % routes.length]!;
        expectAdmitted(await hit(s, ip, method, path, body()), limit, limit - i - 1, `${op} #${i + 1} via ${path}`);
      }
      for (const { method, path, body } of routes) expectLimited(await hit(s, ip, method, path, body()), limit, window, `${op} over the limit via ${path}`);
    });
  }

  it('delete is unlimited (`null`): no counter, no RateLimit headers', async () => {
    const ip = freshIp();
    for (let i = 0; i < 12; i++) {
      const r = await hit(s, ip, 'DELETE', i % 2 ? '/db/many' : '/db', { table: 'limited', where: { title: { eq: 'no such row' } } });
      expect([204, 404]).toContain(r.status);
      expect(r.headers['ratelimit-limit']).toBeUndefined();
    }
  });

  it('each operation keeps its own counter, and update is not custom:bump', async () => {
    const ip = freshIp();
    for (let i = 0; i < 3; i++) expect((await hit(s, ip, 'GET', '/db', byId())).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await hit(s, ip, 'PATCH', '/db/custom/bump', byId())).status).toBe(200);
    expect((await hit(s, ip, 'GET', '/db', byId())).status).toBe(429);
    expect((await hit(s, ip, 'PATCH', '/db/custom/bump', byId())).status).toBe(429);
    // The same IP still has fresh list, count, create and update counters.
    expectAdmitted(await hit(s, ip, 'GET', '/db/list', { table: 'limited' }), 3, 2, 'list');
    expectAdmitted(await hit(s, ip, 'GET', '/db/count', { table: 'limited' }), 3, 2, 'count');
    expectAdmitted(await hit(s, ip, 'POST', '/db', { table: 'limited', object: { title: 'x' } }), 3, 2, 'create');
    expectAdmitted(await hit(s, ip, 'PATCH', '/db', { ...byId(), updates: [{ column: 'n', value: { increment: 1 } }] }), 100, 99, 'update');
    // And another IP is untouched by all of this.
    expectAdmitted(await hit(s, freshIp(), 'GET', '/db', byId()), 3, 2, 'get from another IP');
  });

  it('an unregistered custom name is 404 and costs no counter', async () => {
    const ip = freshIp();
    for (let i = 0; i < 5; i++) {
      const r = await hit(s, ip, 'PATCH', i % 2 ? '/db/custom/nope/many' : '/db/custom/nope', byId());
      expect(r.status).toBe(404);
      expect(r.json.error.code).toBe('NOT_FOUND');
    }
    expectAdmitted(await hit(s, ip, 'PATCH', '/db/custom/bump', byId()), 2, 1, 'bump after five unknown names');
    expectAdmitted(await hit(s, ip, 'PATCH', '/db/custom/bump', byId()), 2, 0, 'second bump');
    expect((await hit(s, ip, 'PATCH', '/db/custom/nope', byId())).status).toBe(404);
    expectLimited(await hit(s, ip, 'PATCH', '/db/custom/bump', byId()), 2, 10, 'third bump');
  });

  it('429 comes before the operations step: an over-limit malformed body is 429, not 400', async () => {
    const ip = freshIp();
    const badList = { table: 'limited', where: { nope: { eq: 1 } } };
    // Under the limit the malformed `where` is a 400 — and counts, since it passed step 1.
    for (let i = 0; i < 3; i++) {
      const r = await hit(s, ip, 'GET', '/db/list', badList);
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('BAD_REQUEST');
    }
    expectLimited(await hit(s, ip, 'GET', '/db/list', badList), 3, 10, 'malformed list over the limit');
    expectLimited(await hit(s, ip, 'GET', '/db/stream/list', badList), 3, 10, 'malformed stream-list over the limit');
    expectLimited(await hit(s, ip, 'GET', '/db/list', { table: 'limited', limit: 5000 }), 3, 10, 'list over the maximum limit');

    const other = freshIp();
    for (let i = 0; i < 3; i++) expect((await hit(s, other, 'POST', '/db', { table: 'limited', object: { title: `ok${i}` } })).status).toBe(200);
    for (const object of [{ title: 5 }, { nope: 1 }, { id: 'lm_0000000000000000', title: 'x' }]) {
      expectLimited(await hit(s, other, 'POST', '/db', { table: 'limited', object }), 3, 10, `create ${JSON.stringify(object)}`);
    }
  });

  it('429 comes before the rules: a table whose rules deny everything still answers 429 past the limit', async () => {
    // `secrets` has no rules (403 for everything) and no policies: the default 100 per minute.
    const ip = freshIp();
    for (let i = 0; i < 100; i++) {
      const r = await hit(s, ip, 'GET', '/db/count', { table: 'secrets' });
      expect(r.status, `request ${i + 1}`).toBe(403);
      expect(r.json.error.code).toBe('FORBIDDEN');
    }
    expectLimited(await hit(s, ip, 'GET', '/db/count', { table: 'secrets' }), 100, 60, 'secrets count #101');
    expectLimited(await hit(s, ip, 'GET', '/db/count', { table: 'secrets', where: { nope: { eq: 1 } } }), 100, 60, 'secrets count, malformed, #102');
  });

  it('a spoofed X-Forwarded-For is ignored: no trusted proxies by default (docs/reference/rate-limits.md)', async () => {
    const ip = freshIp();
    for (let i = 0; i < 3; i++) {
      expectAdmitted(await hit(s, ip, 'GET', '/db/count', { table: 'limited' }, { 'x-forwarded-for': `203.0.113.${i + 1}` }), 3, 2 - i, `count #${i + 1}`);
    }
    for (const xff of ['203.0.113.99', '198.51.100.7, 203.0.113.50', '127.0.0.1']) {
      expectLimited(await hit(s, ip, 'GET', '/db/count', { table: 'limited' }, { 'x-forwarded-for': xff }), 3, 10, `X-Forwarded-For: ${xff}`);
    }
  });
});
