/**
 * End-to-end: rules that need a signed-in caller — the row filter (docs/reference/rules-and-hooks.md: any returned row
 * failing canView makes the request 403), list update forms, and the `complete` custom operation.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { useServer } from '../helpers/lifecycle.js';
import { createRow, createRows } from '../helpers/rows.js';
import { scenarios, type ScenarioContext } from '../helpers/scenario.js';
import { signUp } from '../helpers/users.js';
import type { Row } from '../helpers/server.js';

const s = useServer();
const ctx: ScenarioContext = { server: s, who: {}, vars: {} };
let alice: Record<string, string>;

beforeAll(async () => {
  const [a, b] = await Promise.all([signUp(s, 'alice@example.com'), signUp(s, 'bob@example.com')]);
  ctx.who = { alice: a.auth, bob: b.auth };
  alice = a.auth;
  // beforeCreate sets the owner: the caller.
  ctx.vars.mine = (await createRow(s, 'notes', { body: 'mine' }, alice)).id;
  ctx.vars.keep = (await createRow(s, 'notes', { body: 'keep' }, alice)).id;
});

const note = (key: string) => (c: ScenarioContext) => ({ table: 'notes', where: { id: { eq: c.vars[key] } } });

scenarios("the row filter on notes: a note shows only to its owner; a page with another's note is 403", ctx, [
  { name: 'the owner reads it', method: 'GET', path: '/db', as: 'alice', body: note('mine'), status: 200, like: { body: 'mine' } },
  { name: 'another user may not', method: 'GET', path: '/db', as: 'bob', body: note('mine'), status: 403, code: 'FORBIDDEN' },
  { name: "a page holding another's note is 403", method: 'GET', path: '/db/list', as: 'bob', body: { table: 'notes' }, status: 403 },
  { name: 'an empty page is fine', method: 'GET', path: '/db/list', as: 'bob', body: { table: 'notes', where: { ownerId: { eq: 'nobody' } } }, status: 200, data: { items: [], total: 0 } },
  {
    name: 'count is not row-filtered (docs/reference/data.md)',
    method: 'GET',
    path: '/db/count',
    as: 'bob',
    body: { table: 'notes' },
    status: 200,
    after: async (r) => expect(r.json.data).toBeGreaterThanOrEqual(1),
  },
  { name: 'without a token the table rule denies first', method: 'GET', path: '/db/list', body: { table: 'notes' }, status: 403 },
  {
    name: 'a denied row-filtered update writes nothing',
    method: 'PATCH',
    path: '/db',
    as: 'bob',
    body: (c) => ({ ...note('keep')(c), updates: [{ column: 'body', value: 'changed' }] }),
    status: 403,
    after: async (_r, c) => expect((await s.get('/db', note('keep')(c), alice)).json.data.body).toBe('keep'),
  },
]);

const userByEmail = (email: string) => ({ table: 'users', where: { email: { eq: email } } });

scenarios('users see only their own row; list is admin-only; count is open', ctx, [
  { name: 'a user finds their row by email, in any case', method: 'GET', path: '/db', as: 'alice', body: userByEmail('ALICE@example.com'), status: 200, like: { email: 'alice@example.com' } },
  { name: "another user's row is 403", method: 'GET', path: '/db', as: 'bob', body: userByEmail('alice@example.com'), status: 403 },
  { name: 'list is 403 for a user', method: 'GET', path: '/db/list', as: 'alice', body: { table: 'users' }, status: 403 },
  { name: 'count is open', method: 'GET', path: '/db/count', body: { table: 'users' }, status: 200, data: 2 },
  {
    name: 'rules come before the body: a password filter is still 403, not 400',
    method: 'GET',
    path: '/db/list',
    as: 'alice',
    body: { table: 'users', where: { password: { eq: 'x' } } },
    status: 403,
  },
]);

/** A row with its timestamps, compared as ISO strings. */
type Stamped = Row & { updatedAt: string };

describe('update forms and custom operations on tasks', () => {
  it('adds and removes list items, sets null, and stamps completedAt only when isComplete changes', async () => {
    const t = await createRow<Stamped>(s, 'tasks', { title: 'forms', tags: ['a'], ownerId: 'x' });
    const where = { id: { eq: t.id } };
    const patch = (updates: unknown) => s.call<{ data: Stamped }>('PATCH', '/db', { table: 'tasks', where, updates }, alice);
    expect((await patch([{ column: 'tags', value: { add: 'b' } }])).json.data.tags).toEqual(['a', 'b']);
    expect((await patch([{ column: 'tags', value: { add: 'b' } }])).json.data.tags).toEqual(['a', 'b']);
    expect((await patch([{ column: 'tags', value: { remove: 'a' } }])).json.data.tags).toEqual(['b']);
    expect((await patch([{ column: 'ownerId', value: null }])).json.data.ownerId).toBeNull();
    expect((await patch([{ column: 'score', value: { increment: 1.5 } }])).json.data.score).toBe(1.5);
    const renamed = (await patch([{ column: 'title', value: 'renamed' }])).json.data;
    expect(renamed.completedAt).toBeNull();
    expect(renamed.updatedAt >= t.updatedAt).toBe(true);
    expect(renamed.createdAt).toBe(t.createdAt);
    const done = (await patch([{ column: 'isComplete', value: true }])).json.data;
    expect(done.completedAt).toMatch(/Z$/);
    expect((await patch([{ column: 'tags', value: { add: 5 } }])).status).toBe(400);
    expect((await patch([{ column: 'priority', value: { increment: 0.5 } }])).status).toBe(400);
  });

  it('complete: 403 without a token, sets isComplete on one row or many, 404 when nothing matches', async () => {
    const rows = await createRows(s, 'tasks', [
      { title: 'c1', ownerId: 'cx' },
      { title: 'c2', ownerId: 'cx' },
    ]);
    const where = { ownerId: { eq: 'cx' } };
    expect((await s.call('PATCH', '/db/custom/complete', { table: 'tasks', where })).status).toBe(403);
    const one = await s.call('PATCH', '/db/custom/complete', { table: 'tasks', where }, alice);
    expect(one.status, one.text).toBe(200);
    expect(one.json.data).toMatchObject({ id: rows[0]!.id, isComplete: true });
    const many = await s.call('PATCH', '/db/custom/complete/many', { table: 'tasks', where }, alice);
    expect(many.json.data.map((r) => r.isComplete)).toEqual([true, true]);
    const none = await s.call('PATCH', '/db/custom/complete', { table: 'tasks', where: { ownerId: { eq: 'nobody' } } }, alice);
    expect(none.status).toBe(404);
    expect((await s.call('PATCH', '/db/custom/complete', { table: 'tasks', where: { nope: { eq: 1 } } }, alice)).status).toBe(400);
  });

  it('deletes with a token, and view rows follow the join', async () => {
    const me = (await s.get('/db', { table: 'users', where: { email: { eq: 'alice@example.com' } } }, alice)).json.data;
    const t = await createRow(s, 'tasks', { title: 'joined', ownerId: me.id });
    const board = await s.get('/db', { table: 'task_board', where: { id: { eq: t.id } } });
    expect(board.json.data).toEqual({ id: t.id, title: 'joined', isComplete: false, ownerEmail: 'alice@example.com' });
    expect((await s.get('/db/list', { table: 'task_board', where: { ownerEmail: { eq: 'alice@example.com' } } })).json.data.total).toBe(1);
    expect((await s.call('DELETE', '/db', { table: 'tasks', where: { id: { eq: t.id } } }, alice)).status).toBe(204);
  });
});
