/**
 * End-to-end: the /db routes of the conformance project against a real server (SPEC §4, §12).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(async () => {
  await s?.dispose();
});

const create = async (object: Record<string, unknown>) => {
  const r = await s.call('POST', '/db', { table: 'tasks', object });
  expect(r.status, r.text).toBe(200);
  return r.json.data;
};

describe('create and get', () => {
  it('creates a row with generated id, defaults and timestamps', async () => {
    const row = await create({ title: 'first' });
    expect(row.id).toMatch(/^tk_[0-9a-z]{16,32}$/);
    expect(row).toMatchObject({ title: 'first', isComplete: false, priority: 0, score: 0, ownerId: null, tags: [], completedAt: null });
    expect(row.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(row.updatedAt).toBe(row.createdAt);
    const g = await s.get('/db', { table: 'tasks', where: { id: { eq: row.id } } });
    expect(g.status).toBe(200);
    expect(g.json.data).toEqual(row);
  });

  it('accepts the GET body as a JSON request body too', async () => {
    const row = await create({ title: 'json-body' });
    const g = await s.call('GET', '/db', { table: 'tasks', where: { id: { eq: row.id } } });
    expect(g.json.data.id).toBe(row.id);
  });

  it('ids made later sort after earlier ones', async () => {
    const a = await create({ title: 'a' });
    const b = await create({ title: 'b' });
    expect(b.id > a.id).toBe(true);
  });

  it('ignores server-managed timestamps and rejects a client id', async () => {
    const row = await create({ title: 't', createdAt: '2000-01-01T00:00:00.000Z' });
    expect(row.createdAt).not.toBe('2000-01-01T00:00:00.000Z');
    const r = await s.call('POST', '/db', { table: 'tasks', object: { id: 'tk_0000000000000000', title: 'x' } });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('BAD_REQUEST');
  });

  it('400s for a missing required column, a wrong type, an unknown or snake_case column', async () => {
    for (const object of [{}, { title: 5 }, { title: 'x', nope: 1 }, { title: 'x', is_complete: true }, { title: 'x', priority: 1.5 }, { title: 'x', tags: [1] }]) {
      const r = await s.call('POST', '/db', { table: 'tasks', object });
      expect(r.status, JSON.stringify(object)).toBe(400);
      expect(r.json.error.code).toBe('BAD_REQUEST');
    }
  });

  it('get answers 404 when nothing matches', async () => {
    const r = await s.get('/db', { table: 'tasks', where: { title: { eq: 'no such title' } } });
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe('NOT_FOUND');
  });

  it('create many is all-or-nothing and answers rows in input order', async () => {
    const ok = await s.call('POST', '/db/many', { table: 'tasks', objects: [{ title: 'm1' }, { title: 'm2', priority: 2 }] });
    expect(ok.status).toBe(200);
    expect(ok.json.data.map((r: any) => r.title)).toEqual(['m1', 'm2']);
    const before = (await s.get('/db/count', { table: 'tasks' })).json.data;
    const bad = await s.call('POST', '/db/many', { table: 'tasks', objects: [{ title: 'ok' }, { title: 7 }] });
    expect(bad.status).toBe(400);
    expect((await s.get('/db/count', { table: 'tasks' })).json.data).toBe(before);
    expect((await s.call('POST', '/db/many', { table: 'tasks', objects: [] })).status).toBe(400);
  });
});

describe('list, count and the where grammar', () => {
  const tag = `w${Date.now()}`;
  beforeAll(async () => {
    await s.call('POST', '/db/many', {
      table: 'tasks',
      objects: [
        { title: `${tag} Alpha`, priority: 1, score: 1.5, tags: ['red', 'blue'], ownerId: 'o1' },
        { title: `${tag} beta 100%`, priority: 2, score: 2.5, tags: ['blue'], ownerId: null },
        { title: `${tag} gamma_x`, priority: 3, score: -1, tags: [], ownerId: 'o2', isComplete: true },
      ],
    });
  });
  const titles = async (where: object, extra: object = {}) => {
    const r = await s.get('/db/list', { table: 'tasks', where: { and: [{ title: { startsWith: tag } }, where] }, ...extra });
    expect(r.status, r.text).toBe(200);
    return r.json.data.items.map((x: any) => x.title.slice(tag.length + 1));
  };

  it('supports every operator', async () => {
    expect(await titles({ priority: { eq: 2 } })).toEqual(['beta 100%']);
    expect(await titles({ priority: { ne: 2 } })).toEqual(['Alpha', 'gamma_x']);
    expect(await titles({ priority: { gt: 1 } })).toEqual(['beta 100%', 'gamma_x']);
    expect(await titles({ priority: { gte: 2 } })).toEqual(['beta 100%', 'gamma_x']);
    expect(await titles({ score: { lt: 1.5 } })).toEqual(['gamma_x']);
    expect(await titles({ score: { lte: 1.5 } })).toEqual(['Alpha', 'gamma_x']);
    expect(await titles({ priority: { in: [1, 3] } })).toEqual(['Alpha', 'gamma_x']);
    expect(await titles({ priority: { nin: [1, 3] } })).toEqual(['beta 100%']);
    expect(await titles({ priority: { in: [] } })).toEqual([]);
    expect(await titles({ priority: { nin: [] } })).toEqual(['Alpha', 'beta 100%', 'gamma_x']);
    expect(await titles({ title: { contains: 'a_' } })).toEqual(['gamma_x']);
    expect(await titles({ title: { contains: '%' } })).toEqual(['beta 100%']);
    expect(await titles({ title: { contains: 'alpha' } })).toEqual([]); // case-sensitive
    expect(await titles({ title: { endsWith: '_x' } })).toEqual(['gamma_x']);
    expect(await titles({ ownerId: { isNull: true } })).toEqual(['beta 100%']);
    expect(await titles({ ownerId: { isNull: false } })).toEqual(['Alpha', 'gamma_x']);
    expect(await titles({ ownerId: { eq: null } })).toEqual(['beta 100%']);
    expect(await titles({ ownerId: { ne: 'o1' } })).toEqual(['beta 100%', 'gamma_x']); // null is a value
    expect(await titles({ ownerId: { nin: ['o1'] } })).toEqual(['beta 100%', 'gamma_x']);
    expect(await titles({ tags: { has: 'blue' } })).toEqual(['Alpha', 'beta 100%']);
    expect(await titles({ isComplete: { eq: true } })).toEqual(['gamma_x']);
    expect(await titles({ priority: { gte: 1, lt: 3 } })).toEqual(['Alpha', 'beta 100%']);
  });

  it('combines with and, or and not', async () => {
    expect(await titles({ or: [{ priority: { eq: 1 } }, { priority: { eq: 3 } }] })).toEqual(['Alpha', 'gamma_x']);
    expect(await titles({ not: { priority: { eq: 1 } } })).toEqual(['beta 100%', 'gamma_x']);
    expect(await titles({ not: { ownerId: { eq: 'o1' } } })).toEqual(['beta 100%', 'gamma_x']);
    expect(await titles({ or: [] })).toEqual([]);
  });

  it('orders, pages and totals', async () => {
    expect(await titles({}, { order_by: [{ column: 'priority', direction: 'desc' }] })).toEqual(['gamma_x', 'beta 100%', 'Alpha']);
    expect(await titles({}, { order_by: [{ column: 'score' }] })).toEqual(['gamma_x', 'Alpha', 'beta 100%']);
    const r = await s.get('/db/list', { table: 'tasks', where: { title: { startsWith: tag } }, limit: 1, offset: 1 });
    expect(r.json.data.items).toHaveLength(1);
    expect(r.json.data.total).toBe(3);
    const past = await s.get('/db/list', { table: 'tasks', where: { title: { startsWith: tag } }, limit: 5, offset: 10 });
    expect(past.json.data).toEqual({ items: [], total: 3 });
    const c = await s.get('/db/count', { table: 'tasks', where: { title: { startsWith: tag } } });
    expect(c.json.data).toBe(3);
  });

  it('rejects bad filters with 400 and leaves the table intact', async () => {
    const bad = [
      { nope: { eq: 1 } },
      { title: { like: 'x' } },
      { title: 'x' },
      { priority: { eq: 'one' } },
      { 'title; DROP TABLE tasks; --': { eq: 1 } },
      { tags: { eq: 'red' } },
      { priority: { in: 'x' } },
      { and: {} },
    ];
    for (const where of bad) {
      const r = await s.get('/db/list', { table: 'tasks', where });
      expect(r.status, JSON.stringify(where)).toBe(400);
      expect(r.json.error.code).toBe('BAD_REQUEST');
      expect(r.text).not.toMatch(/SELECT|sqlite|at .*\.ts/i);
    }
    let deep: any = { priority: { eq: 1 } };
    for (let i = 0; i < 200; i++) deep = { not: deep };
    expect((await s.call('GET', '/db/list', { table: 'tasks', where: deep })).status).toBe(400);
    const injected = await s.get('/db/list', { table: 'tasks', where: { title: { eq: "x' OR '1'='1" } } });
    expect(injected.json.data.items).toEqual([]);
    expect((await s.get('/db/count', { table: 'tasks', where: { title: { startsWith: tag } } })).json.data).toBe(3);
  });

  it('enforces paging limits and order_by shape', async () => {
    expect((await s.get('/db/list', { table: 'tasks', limit: 1001 })).status).toBe(400);
    expect((await s.get('/db/list', { table: 'tasks', limit: -1 })).status).toBe(400);
    expect((await s.get('/db/list', { table: 'tasks', order_by: [{ column: 'nope' }] })).status).toBe(400);
    expect((await s.get('/db/list', { table: 'tasks', order_by: [{ column: 'title', direction: 'up' }] })).status).toBe(400);
    const all = await s.get('/db/list', { table: 'tasks' });
    expect(all.json.data.items.length).toBeLessThanOrEqual(100);
  });
});

describe('update and delete', () => {
  it('needs a token on tasks (403) before looking at the body', async () => {
    const r = await s.call('PATCH', '/db', { table: 'tasks', where: 'garbage' });
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe('FORBIDDEN');
  });

  it('applies every update form on an open table', async () => {
    const created = (await s.call('POST', '/db', { table: 'limited', object: { title: 'u' } })).json.data;
    const inc = await s.call('PATCH', '/db', { table: 'limited', where: { id: { eq: created.id } }, updates: [{ column: 'n', value: { increment: 5 } }] });
    expect(inc.status, inc.text).toBe(200);
    expect(inc.json.data.n).toBe(5);
    const dec = await s.call('PATCH', '/db', {
      table: 'limited',
      where: { id: { eq: created.id } },
      updates: [
        { column: 'n', value: { decrement: 2 } },
        { column: 'title', value: 'v' },
      ],
    });
    expect(dec.json.data).toMatchObject({ n: 3, title: 'v' });
    expect(dec.json.data.updatedAt).toBeUndefined();
  });

  it('rejects forms that do not fit the column', async () => {
    const e = (await s.call('POST', '/db', { table: 'events', object: { title: 'e' } })).json.data;
    for (const updates of [[{ column: 'title', value: { increment: 1 } }], [{ column: 'id', value: 'x' }], [], [{ column: 'nope', value: 1 }], [{ column: 'title', value: null }]]) {
      const r = await s.call('PATCH', '/db', { table: 'events', where: { id: { eq: e.id } }, updates });
      expect(r.status, JSON.stringify(updates)).toBe(400);
    }
    const ok = await s.call('PATCH', '/db', { table: 'events', where: { id: { eq: e.id } }, updates: [{ column: 'kind', value: null }] });
    expect(ok.status).toBe(200);
  });

  it('update acts on the first matching row only; update many on all, honouring limit', async () => {
    const objects = [{ payload: 'same' }, { payload: 'same' }, { payload: 'same' }];
    const rows = (await s.call('POST', '/db/many', { table: 'big', objects })).json.data;
    const ids = rows.map((r: any) => r.id);
    const where = { id: { in: ids } };
    const one = await s.call('PATCH', '/db', { table: 'big', where, updates: [{ column: 'payload', value: 'one' }] });
    expect(one.json.data.id).toBe(ids[0]);
    const two = await s.call('PATCH', '/db/many', { table: 'big', where: { id: { in: ids }, payload: { eq: 'same' } }, updates: [{ column: 'payload', value: 'many' }], limit: 1 });
    expect(two.json.data.map((r: any) => r.id)).toEqual([ids[1]]);
    const rest = await s.call('PATCH', '/db/many', { table: 'big', where, updates: [{ column: 'payload', value: 'all' }] });
    expect(rest.json.data).toHaveLength(3);
    const none = await s.call('PATCH', '/db/many', { table: 'big', where: { payload: { eq: 'nothing' } }, updates: [{ column: 'payload', value: 'x' }] });
    expect(none.status).toBe(200);
    expect(none.json.data).toEqual([]);
    const miss = await s.call('PATCH', '/db', { table: 'big', where: { payload: { eq: 'nothing' } }, updates: [{ column: 'payload', value: 'x' }] });
    expect(miss.status).toBe(404);
  });

  it('delete removes the first match (204), delete many all (204 even when none)', async () => {
    const rows = (await s.call('POST', '/db/many', { table: 'big', objects: [{ payload: 'del' }, { payload: 'del' }, { payload: 'del' }] })).json.data;
    const where = { id: { in: rows.map((r: any) => r.id) } };
    const d1 = await s.call('DELETE', '/db', { table: 'big', where });
    expect(d1.status).toBe(204);
    expect(d1.text).toBe('');
    expect((await s.get('/db/count', { table: 'big', where })).json.data).toBe(2);
    expect((await s.call('DELETE', '/db/many', { table: 'big', where, limit: 1 })).status).toBe(204);
    expect((await s.get('/db/count', { table: 'big', where })).json.data).toBe(1);
    expect((await s.call('DELETE', '/db/many', { table: 'big', where })).status).toBe(204);
    expect((await s.call('DELETE', '/db/many', { table: 'big', where })).status).toBe(204);
    expect((await s.call('DELETE', '/db', { table: 'big', where })).status).toBe(404);
  });
});

describe('views', () => {
  it('lists the joined view with its default order, never ambiguous on id', async () => {
    const t = await create({ title: 'on the board' });
    const r = await s.get('/db/list', { table: 'task_board', where: { id: { eq: t.id } } });
    expect(r.status, r.text).toBe(200);
    expect(r.json.data.items).toEqual([{ id: t.id, title: 'on the board', isComplete: false, ownerEmail: null }]);
    const all = await s.get('/db/list', { table: 'task_board', limit: 5 });
    expect(all.status).toBe(200);
    expect((await s.get('/db/list', { table: 'task_board', order_by: [] })).status).toBe(200);
    expect((await s.get('/db/count', { table: 'task_board' })).json.data).toBeGreaterThan(0);
    expect((await s.get('/db', { table: 'task_board', where: { title: { eq: 'on the board' } } })).json.data.id).toBe(t.id);
  });

  it('denies every write on a view, admins included, before the custom registry', async () => {
    for (const [m, p, body] of [
      ['POST', '/db', { table: 'task_board', object: { title: 'x' } }],
      ['PATCH', '/db', { table: 'task_board', where: {}, updates: [{ column: 'title', value: 'x' }] }],
      ['DELETE', '/db/many', { table: 'task_board', where: {} }],
      ['PATCH', '/db/custom/anything', { table: 'task_board', where: {} }],
    ] as const) {
      const r = await s.call(m, p, body);
      expect(r.status, `${m} ${p}`).toBe(403);
    }
  });
});

describe('custom operations and closed tables', () => {
  it('404s an unregistered name, 501s a registered one with no handler, 403s without the rule', async () => {
    expect((await s.call('PATCH', '/db/custom/nope', { table: 'tasks', where: {} })).status).toBe(404);
    expect((await s.call('PATCH', '/db/custom/nope', { table: 'secrets', where: {} })).status).toBe(404);
    const archive = await s.call('PATCH', '/db/custom/archive', { table: 'tasks', where: {} });
    expect(archive.status).toBe(501);
    expect(archive.json.error.code).toBe('NOT_IMPLEMENTED');
    expect((await s.call('PATCH', '/db/custom/complete', { table: 'tasks', where: {} })).status).toBe(403);
  });

  it('runs a handler (bump) and its /many form', async () => {
    const row = (await s.call('POST', '/db', { table: 'big', object: { payload: 'p' } })).json.data;
    expect(row).toBeTruthy();
    const l = (await s.call('POST', '/db', { table: 'limited', object: { title: 'bump me' } })).json.data;
    const b = await s.call('PATCH', '/db/custom/bump', { table: 'limited', where: { id: { eq: l.id } } });
    expect(b.status, b.text).toBe(200);
    expect(b.json.data.n).toBe(1);
    const m = await s.call('PATCH', '/db/custom/bump/many', { table: 'limited', where: { id: { eq: l.id } } });
    expect(m.json.data[0].n).toBe(2);
  });

  it('errors after step 1 still carry the RateLimit-* headers of a limited route (SPEC §9)', async () => {
    const r = await s.get('/db/count', { table: 'secrets' });
    expect(r.status).toBe(403);
    expect(r.headers.get('ratelimit-limit')).toBe('100');
    expect(Number(r.headers.get('ratelimit-remaining'))).toBeLessThan(100);
  });

  it('a table with no rules denies everything', async () => {
    expect((await s.get('/db/list', { table: 'secrets' })).status).toBe(403);
    expect((await s.call('POST', '/db', { table: 'secrets', object: { value: 'x' } })).status).toBe(403);
    expect((await s.get('/db/count', { table: 'audit' })).status).toBe(200);
    expect((await s.call('POST', '/db', { table: 'audit', object: { action: 'x', ref: 'y' } })).status).toBe(403);
  });
});

describe('HTTP conventions', () => {
  it('answers the error envelope for malformed input, never a 5xx', async () => {
    const cases: [string, string, string | undefined][] = [
      ['POST', '/db', '{not json'],
      ['POST', '/db', '[]'],
      ['POST', '/db', '{}'],
      ['POST', '/db', JSON.stringify({ table: 7 })],
      ['GET', '/db/list?body=%7Bnope', undefined],
    ];
    for (const [m, p, body] of cases) {
      const r = await s.call(m, p, body);
      expect(r.status, `${m} ${p} ${body}`).toBe(400);
      expect(r.headers.get('content-type')).toMatch(/application\/json/);
      expect(r.json.error.code).toBe('BAD_REQUEST');
    }
  });

  it('404s an unknown table, 405s a wrong method with Allow, 404s an unknown route', async () => {
    expect((await s.get('/db/list', { table: 'no_such' })).status).toBe(404);
    const r = await s.call('PUT', '/db');
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toContain('GET');
    expect((await s.call('GET', '/nowhere')).status).toBe(404);
  });

  it('413s a 10 MB body and stays healthy', async () => {
    const r = await s.call('POST', '/db', JSON.stringify({ table: 'big', object: { payload: 'x'.repeat(10 * 1024 * 1024) } }));
    expect(r.status).toBe(413);
    expect(r.json.error.code).toBe('PAYLOAD_TOO_LARGE');
    expect((await s.call('GET', '/health')).status).toBe(200);
  });

  it('accepts a 60 KiB request line', async () => {
    const r = await s.get('/db/list', { table: 'tasks', where: { title: { eq: 'y'.repeat(60 * 1024) } } });
    expect(r.status).toBe(200);
  });

  it('echoes X-Request-Id, or makes one', async () => {
    const mine = await s.call('GET', '/health', undefined, { 'x-request-id': 'abc-123' });
    expect(mine.headers.get('x-request-id')).toBe('abc-123');
    expect((await s.call('GET', '/health')).headers.get('x-request-id')).toBeTruthy();
  });

  it('health answers ok', async () => {
    const r = await s.call('GET', '/health');
    expect(r.json).toEqual({ data: { status: 'ok' } });
  });
});
