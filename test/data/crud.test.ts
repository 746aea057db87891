/**
 * End-to-end: create, get, update and delete through /db on the conformance project (docs/reference/data.md,
 * docs/reference/conformance.md). Single-request expectations are scenario tables; stateful sequences are ordinary tests.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { useServer } from '../helpers/lifecycle.js';
import { createRow, createRows, countRows } from '../helpers/rows.js';
import { scenarios, type Scenario, type ScenarioContext } from '../helpers/scenario.js';

const s = useServer();
const ctx: ScenarioContext = { server: s, who: {}, vars: {} };
const create = (object: Record<string, unknown>) => createRow(s, 'tasks', object);

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

  it('ignores server-managed timestamps', async () => {
    const row = await create({ title: 't', createdAt: '2000-01-01T00:00:00.000Z' });
    expect(row.createdAt).not.toBe('2000-01-01T00:00:00.000Z');
  });

  it('create many is all-or-nothing and answers rows in input order', async () => {
    const ok = await createRows(s, 'tasks', [{ title: 'm1' }, { title: 'm2', priority: 2 }]);
    expect(ok.map((r) => r.title)).toEqual(['m1', 'm2']);
    const before = await countRows(s, 'tasks');
    const bad = await s.call('POST', '/db/many', { table: 'tasks', objects: [{ title: 'ok' }, { title: 7 }] });
    expect(bad.status).toBe(400);
    expect(await countRows(s, 'tasks')).toBe(before);
  });
});

const badCreate = (why: string, object: object): Scenario => ({ name: `400 for ${why}`, method: 'POST', path: '/db', body: { table: 'tasks', object }, status: 400, code: 'BAD_REQUEST' });

scenarios('create and get: refusals', ctx, [
  badCreate('a client id', { id: 'tk_0000000000000000', title: 'x' }),
  badCreate('a missing required column', {}),
  badCreate('a wrong type', { title: 5 }),
  badCreate('an unknown column', { title: 'x', nope: 1 }),
  badCreate('a snake_case column', { title: 'x', is_complete: true }),
  badCreate('a fraction in an integer', { title: 'x', priority: 1.5 }),
  badCreate('a number in a text list', { title: 'x', tags: [1] }),
  { name: 'get answers 404 when nothing matches', method: 'GET', path: '/db', body: { table: 'tasks', where: { title: { eq: 'no such title' } } }, status: 404, code: 'NOT_FOUND' },
  { name: 'create many of nothing is a 400', method: 'POST', path: '/db/many', body: { table: 'tasks', objects: [] }, status: 400 },
]);

describe('update and delete', () => {
  it('applies every update form on an open table', async () => {
    const created = await createRow(s, 'limited', { title: 'u' });
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

  it('update acts on the first matching row only; update many on all, honouring limit', async () => {
    const rows = await createRows(s, 'big', [{ payload: 'same' }, { payload: 'same' }, { payload: 'same' }]);
    const ids = rows.map((r) => r.id);
    const where = { id: { in: ids } };
    const one = await s.call('PATCH', '/db', { table: 'big', where, updates: [{ column: 'payload', value: 'one' }] });
    expect(one.json.data.id).toBe(ids[0]);
    const two = await s.call('PATCH', '/db/many', { table: 'big', where: { id: { in: ids }, payload: { eq: 'same' } }, updates: [{ column: 'payload', value: 'many' }], limit: 1 });
    expect(two.json.data.map((r) => r.id)).toEqual([ids[1]]);
    const rest = await s.call('PATCH', '/db/many', { table: 'big', where, updates: [{ column: 'payload', value: 'all' }] });
    expect(rest.json.data).toHaveLength(3);
  });

  it('delete removes the first match (204), delete many all (204 even when none)', async () => {
    const rows = await createRows(s, 'big', [{ payload: 'del' }, { payload: 'del' }, { payload: 'del' }]);
    const where = { id: { in: rows.map((r) => r.id) } };
    const d1 = await s.call('DELETE', '/db', { table: 'big', where });
    expect(d1.status).toBe(204);
    expect(d1.text).toBe('');
    expect(await countRows(s, 'big', where)).toBe(2);
    expect((await s.call('DELETE', '/db/many', { table: 'big', where, limit: 1 })).status).toBe(204);
    expect(await countRows(s, 'big', where)).toBe(1);
    expect((await s.call('DELETE', '/db/many', { table: 'big', where })).status).toBe(204);
    expect((await s.call('DELETE', '/db/many', { table: 'big', where })).status).toBe(204);
    expect((await s.call('DELETE', '/db', { table: 'big', where })).status).toBe(404);
  });
});

describe('update and delete: single requests', () => {
  beforeAll(async () => {
    ctx.vars.eventId = (await createRow(s, 'events', { title: 'e' })).id;
  });
  const byEvent = (c: ScenarioContext) => ({ id: { eq: c.vars.eventId } });
  const badUpdate = (why: string, updates: unknown[]): Scenario => ({
    name: `400 for ${why}`,
    method: 'PATCH',
    path: '/db',
    body: (c) => ({ table: 'events', where: byEvent(c), updates }),
    status: 400,
  });
  const nothing = { payload: { eq: 'nothing' } };
  scenarios('refusals and misses', ctx, [
    { name: 'needs a token on tasks (403) before looking at the body', method: 'PATCH', path: '/db', body: { table: 'tasks', where: 'garbage' }, status: 403, code: 'FORBIDDEN' },
    badUpdate('increment on text', [{ column: 'title', value: { increment: 1 } }]),
    badUpdate('setting the id', [{ column: 'id', value: 'x' }]),
    badUpdate('no updates', []),
    badUpdate('an unknown column', [{ column: 'nope', value: 1 }]),
    badUpdate('null in a required column', [{ column: 'title', value: null }]),
    { name: 'null in a nullable column is fine', method: 'PATCH', path: '/db', body: (c) => ({ table: 'events', where: byEvent(c), updates: [{ column: 'kind', value: null }] }), status: 200 },
    { name: 'update many matching nothing answers []', method: 'PATCH', path: '/db/many', body: { table: 'big', where: nothing, updates: [{ column: 'payload', value: 'x' }] }, status: 200, data: [] },
    { name: 'update matching nothing is a 404', method: 'PATCH', path: '/db', body: { table: 'big', where: nothing, updates: [{ column: 'payload', value: 'x' }] }, status: 404 },
  ]);
});
