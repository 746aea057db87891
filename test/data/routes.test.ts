/**
 * End-to-end: the rest of /db on the conformance project (docs/reference/conventions.md, docs/reference/data.md, docs/reference/rate-limits.md, docs/reference/conformance.md): views, custom
 * operations, closed tables and the HTTP conventions every route shares.
 */
import { describe, expect, it } from 'vitest';
import { useServer } from '../helpers/lifecycle.js';
import { createRow, countRows } from '../helpers/rows.js';
import { scenarios, type Scenario, type ScenarioContext } from '../helpers/scenario.js';

const s = useServer();
const ctx: ScenarioContext = { server: s, who: {}, vars: {} };

describe('views', () => {
  it('lists the joined view with its default order, never ambiguous on id', async () => {
    const t = await createRow(s, 'tasks', { title: 'on the board' });
    const r = await s.get('/db/list', { table: 'task_board', where: { id: { eq: t.id } } });
    expect(r.status, r.text).toBe(200);
    expect(r.json.data.items).toEqual([{ id: t.id, title: 'on the board', isComplete: false, ownerEmail: null }]);
    const all = await s.get('/db/list', { table: 'task_board', limit: 5 });
    expect(all.status).toBe(200);
    expect((await s.get('/db/list', { table: 'task_board', order_by: [] })).status).toBe(200);
    expect(await countRows(s, 'task_board')).toBeGreaterThan(0);
    expect((await s.get('/db', { table: 'task_board', where: { title: { eq: 'on the board' } } })).json.data.id).toBe(t.id);
  });
});

const denied = (name: string, method: string, path: string, body: object): Scenario => ({ name, method, path, body, status: 403 });

scenarios('views: every write is denied, admins included, before the custom registry', ctx, [
  denied('create', 'POST', '/db', { table: 'task_board', object: { title: 'x' } }),
  denied('update', 'PATCH', '/db', { table: 'task_board', where: {}, updates: [{ column: 'title', value: 'x' }] }),
  denied('delete many', 'DELETE', '/db/many', { table: 'task_board', where: {} }),
  denied('a custom operation', 'PATCH', '/db/custom/anything', { table: 'task_board', where: {} }),
]);

scenarios('custom operations and closed tables', ctx, [
  { name: '404 for an unregistered name', method: 'PATCH', path: '/db/custom/nope', body: { table: 'tasks', where: {} }, status: 404 },
  { name: '404 for an unregistered name on a closed table', method: 'PATCH', path: '/db/custom/nope', body: { table: 'secrets', where: {} }, status: 404 },
  { name: '501 for a registered name with no handler', method: 'PATCH', path: '/db/custom/archive', body: { table: 'tasks', where: {} }, status: 501, code: 'NOT_IMPLEMENTED' },
  { name: '403 without the rule', method: 'PATCH', path: '/db/custom/complete', body: { table: 'tasks', where: {} }, status: 403 },
  {
    name: 'errors after step 1 still carry the RateLimit-* headers of a limited route (docs/reference/rate-limits.md)',
    method: 'GET',
    path: '/db/count',
    body: { table: 'secrets' },
    status: 403,
    answerHeaders: { 'ratelimit-limit': '100' },
    after: async (r) => expect(Number(r.headers.get('ratelimit-remaining'))).toBeLessThan(100),
  },
  denied('a table with no rules denies list', 'GET', '/db/list', { table: 'secrets' }),
  denied('a table with no rules denies create', 'POST', '/db', { table: 'secrets', object: { value: 'x' } }),
  { name: 'audit may be counted', method: 'GET', path: '/db/count', body: { table: 'audit' }, status: 200 },
  denied('audit may not be written by clients', 'POST', '/db', { table: 'audit', object: { action: 'x', ref: 'y' } }),
]);

describe('custom operations', () => {
  it('runs a handler (bump) and its /many form', async () => {
    expect(await createRow(s, 'big', { payload: 'p' })).toBeTruthy();
    const l = await createRow(s, 'limited', { title: 'bump me' });
    const b = await s.call('PATCH', '/db/custom/bump', { table: 'limited', where: { id: { eq: l.id } } });
    expect(b.status, b.text).toBe(200);
    expect(b.json.data.n).toBe(1);
    const m = await s.call('PATCH', '/db/custom/bump/many', { table: 'limited', where: { id: { eq: l.id } } });
    expect(m.json.data[0]!.n).toBe(2);
  });
});

const malformed = (name: string, method: string, path: string, body?: string): Scenario => ({ name: `400 for ${name}`, method, path, body, status: 400, code: 'BAD_REQUEST' });

scenarios('HTTP conventions (docs/reference/conventions.md)', ctx, [
  malformed('broken JSON', 'POST', '/db', '{not json'),
  malformed('a JSON array', 'POST', '/db', '[]'),
  malformed('an empty object', 'POST', '/db', '{}'),
  malformed('a table that is not a name', 'POST', '/db', JSON.stringify({ table: 7 })),
  malformed('a broken ?body=', 'GET', '/db/list?body=%7Bnope'),
  { name: '404 for an unknown table', method: 'GET', path: '/db/list', body: { table: 'no_such' }, status: 404 },
  { name: '405 for a wrong method, with Allow', method: 'PUT', path: '/db', status: 405, answerHeaders: { allow: /GET/ } },
  { name: '404 for an unknown route', method: 'GET', path: '/nowhere', status: 404 },
  {
    name: '413 for a 10 MB body, and the server stays healthy',
    method: 'POST',
    path: '/db',
    body: JSON.stringify({ table: 'big', object: { payload: 'x'.repeat(10 * 1024 * 1024) } }),
    status: 413,
    code: 'PAYLOAD_TOO_LARGE',
    after: async () => expect((await s.call('GET', '/health')).status).toBe(200),
  },
  { name: 'a 60 KiB request line is accepted', method: 'GET', path: '/db/list', body: { table: 'tasks', where: { title: { eq: 'y'.repeat(60 * 1024) } } }, status: 200 },
  { name: 'echoes X-Request-Id', method: 'GET', path: '/health', headers: { 'x-request-id': 'abc-123' }, status: 200, answerHeaders: { 'x-request-id': 'abc-123' } },
  { name: 'makes an X-Request-Id', method: 'GET', path: '/health', status: 200, answerHeaders: { 'x-request-id': /./ } },
  { name: 'health answers ok', method: 'GET', path: '/health', status: 200, data: { status: 'ok' }, after: async (r) => expect(r.json).toEqual({ data: { status: 'ok' } }) },
]);

describe('X-Request-Id on every kind of answer (set by src/http/server.ts before any writer)', () => {
  const once = (r: { headers: Headers }, sent?: string) => {
    const id = r.headers.get('x-request-id');
    // A duplicate would read "a, b": exactly one header, with the id sent when one was.
    expect(id).toMatch(sent === undefined ? /^[A-Za-z0-9._:-]+$/ : new RegExp(`^${sent}$`));
  };
  it('a row, 404 / 400 / 403 envelopes, an unknown route and a CORS preflight each carry one, the sent id when given', async () => {
    const t = await createRow(s, 'tasks', { title: 'request id' });
    const got = await s.get('/db', { table: 'tasks', where: { id: { eq: t.id } } }, { 'x-request-id': 'get-1' });
    expect(got.status).toBe(200);
    once(got, 'get-1');
    once(await s.get('/db', { table: 'tasks', where: { id: { eq: t.id } } }));
    const missing = await s.get('/db', { table: 'tasks', where: { id: { eq: 'nope' } } }, { 'x-request-id': 'miss-2' });
    expect(missing.status).toBe(404);
    once(missing, 'miss-2');
    const bad = await s.call('GET', '/db?body=%7Bnot-json', undefined, { 'x-request-id': 'bad-3' });
    expect(bad.status).toBe(400);
    once(bad, 'bad-3');
    const denied = await s.call('DELETE', '/db', { table: 'tasks', where: { id: { eq: t.id } } }, { 'x-request-id': 'del-4' });
    expect(denied.status).toBe(403);
    once(denied, 'del-4');
    const unknown = await s.call('GET', '/no/such/route', undefined, { 'x-request-id': 'nf-5' });
    expect(unknown.status).toBe(404);
    once(unknown, 'nf-5');
    const preflight = await s.call('OPTIONS', '/db', undefined, { origin: 'http://localhost:5173', 'access-control-request-method': 'GET', 'x-request-id': 'cors-6' });
    once(preflight, 'cors-6');
  });

  it('a write, a 204, a raw answer and a stream each carry one (every writer of a status line)', async () => {
    const created = await s.call('POST', '/db', { table: 'events', object: { title: 'request id' } }, { 'x-request-id': 'create-7' });
    expect(created.status).toBe(200);
    once(created, 'create-7');
    const id = (created.json as { data: { id: string } }).data.id;
    const deleted = await s.call('DELETE', '/db', { table: 'events', where: { id: { eq: id } } }, { 'x-request-id': 'delete-8' });
    expect(deleted.status).toBe(204);
    once(deleted, 'delete-8');
    const yaml = await s.call('GET', '/swagger.yaml', undefined, { 'x-request-id': 'raw-9' });
    expect(yaml.status).toBe(200);
    once(yaml, 'raw-9');
    const ac = new AbortController();
    try {
      const body = encodeURIComponent(JSON.stringify({ table: 'events', where: {} }));
      const streamed = await fetch(`${s.base}/db/stream/count?body=${body}`, { headers: { 'x-request-id': 'stream-10' }, signal: ac.signal });
      expect(streamed.status).toBe(200);
      once(streamed, 'stream-10');
    } finally {
      ac.abort();
    }
  });
});
