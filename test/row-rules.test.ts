/**
 * End-to-end: rules that need a signed-in caller — the row filter (SPEC §5: any returned row
 * failing canView makes the request 403), list update forms, and the `complete` custom operation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, startServer, type TestServer } from './helpers/server.js';

let s: TestServer;
let alice: Record<string, string>;
let bob: Record<string, string>;

async function signUp(email: string): Promise<Record<string, string>> {
  const r = await s.call('POST', '/auth/sign-up', { type: 'signUp', table: 'users', email, password: 'a long password' });
  expect(r.status, r.text).toBe(200);
  return bearer(r.json.data.accessToken);
}

beforeAll(async () => {
  s = await startServer();
  [alice, bob] = await Promise.all([signUp('alice@example.com'), signUp('bob@example.com')]);
});
afterAll(async () => {
  await s?.dispose();
});

describe('the row filter', () => {
  it("sets the owner in beforeCreate and shows a note only to its owner; a page with another's note is 403", async () => {
    const note = await s.call('POST', '/db', { table: 'notes', object: { body: 'mine' } }, alice);
    expect(note.status, note.text).toBe(200);
    const mine = await s.get('/db', { table: 'notes', where: { id: { eq: note.json.data.id } } }, alice);
    expect(mine.json.data.body).toBe('mine');
    const theirs = await s.get('/db', { table: 'notes', where: { id: { eq: note.json.data.id } } }, bob);
    expect(theirs.status).toBe(403);
    expect(theirs.json.error.code).toBe('FORBIDDEN');
    expect((await s.get('/db/list', { table: 'notes' }, bob)).status).toBe(403);
    expect((await s.get('/db/list', { table: 'notes', where: { ownerId: { eq: 'nobody' } } }, bob)).json.data).toEqual({ items: [], total: 0 });
    // count is not row-filtered (SPEC §13.19)
    expect((await s.get('/db/count', { table: 'notes' }, bob)).json.data).toBeGreaterThanOrEqual(1);
    // without a token the table rule denies first
    expect((await s.get('/db/list', { table: 'notes' })).status).toBe(403);
  });

  it('a denied row-filtered update writes nothing', async () => {
    const note = (await s.call('POST', '/db', { table: 'notes', object: { body: 'keep' } }, alice)).json.data;
    const r = await s.call('PATCH', '/db', { table: 'notes', where: { id: { eq: note.id } }, updates: [{ column: 'body', value: 'changed' }] }, bob);
    expect(r.status).toBe(403);
    const after = await s.get('/db', { table: 'notes', where: { id: { eq: note.id } } }, alice);
    expect(after.json.data.body).toBe('keep');
  });

  it('users see only their own row; list is admin-only; count is open', async () => {
    expect((await s.get('/db', { table: 'users', where: { email: { eq: 'ALICE@example.com' } } }, alice)).json.data.email).toBe('alice@example.com');
    expect((await s.get('/db', { table: 'users', where: { email: { eq: 'alice@example.com' } } }, bob)).status).toBe(403);
    expect((await s.get('/db/list', { table: 'users' }, alice)).status).toBe(403);
    expect((await s.get('/db/count', { table: 'users' })).json.data).toBe(2);
    const r = await s.get('/db/list', { table: 'users', where: { password: { eq: 'x' } } }, alice);
    expect(r.status).toBe(403); // rules come before the body: still 403, not 400
  });
});

describe('update forms and custom operations on tasks', () => {
  it('adds and removes list items, sets null, and stamps completedAt only when isComplete changes', async () => {
    const t = (await s.call('POST', '/db', { table: 'tasks', object: { title: 'forms', tags: ['a'], ownerId: 'x' } })).json.data;
    const where = { id: { eq: t.id } };
    const patch = (updates: unknown) => s.call('PATCH', '/db', { table: 'tasks', where, updates }, alice);
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
    const rows = (
      await s.call('POST', '/db/many', {
        table: 'tasks',
        objects: [
          { title: 'c1', ownerId: 'cx' },
          { title: 'c2', ownerId: 'cx' },
        ],
      })
    ).json.data;
    const where = { ownerId: { eq: 'cx' } };
    expect((await s.call('PATCH', '/db/custom/complete', { table: 'tasks', where })).status).toBe(403);
    const one = await s.call('PATCH', '/db/custom/complete', { table: 'tasks', where }, alice);
    expect(one.status, one.text).toBe(200);
    expect(one.json.data).toMatchObject({ id: rows[0].id, isComplete: true });
    const many = await s.call('PATCH', '/db/custom/complete/many', { table: 'tasks', where }, alice);
    expect(many.json.data.map((r: { isComplete: boolean }) => r.isComplete)).toEqual([true, true]);
    const none = await s.call('PATCH', '/db/custom/complete', { table: 'tasks', where: { ownerId: { eq: 'nobody' } } }, alice);
    expect(none.status).toBe(404);
    expect((await s.call('PATCH', '/db/custom/complete', { table: 'tasks', where: { nope: { eq: 1 } } }, alice)).status).toBe(400);
  });

  it('deletes with a token, and view rows follow the join', async () => {
    const me = (await s.get('/db', { table: 'users', where: { email: { eq: 'alice@example.com' } } }, alice)).json.data;
    const t = (await s.call('POST', '/db', { table: 'tasks', object: { title: 'joined', ownerId: me.id } })).json.data;
    const board = await s.get('/db', { table: 'task_board', where: { id: { eq: t.id } } });
    expect(board.json.data).toEqual({ id: t.id, title: 'joined', isComplete: false, ownerEmail: 'alice@example.com' });
    expect((await s.get('/db/list', { table: 'task_board', where: { ownerEmail: { eq: 'alice@example.com' } } })).json.data.total).toBe(1);
    expect((await s.call('DELETE', '/db', { table: 'tasks', where: { id: { eq: t.id } } }, alice)).status).toBe(204);
  });
});
