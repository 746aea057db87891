/**
 * The admin API under /dashboard/ (docs/reference/dashboard.md) over HTTP: every /dashboard/ route of the
 * OpenAPI document answers 401 without a token and 403 for a user token; rows go through the
 * writer with hooks and validation; cron run-now never overlaps; the request log finds a request
 * by its id and never holds bodies or tokens; the page's security headers.
 */
import sharp from 'sharp';
import { signIn } from '../helpers/users.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scenarios, type ScenarioContext } from '../helpers/scenario.js';
import { bearer, type TestServer } from '../helpers/server.js';
import { startDashboardServer, uploadPhoto, USER, type DashboardFixture } from './fixture.js';

let f: DashboardFixture;
const ctx: ScenarioContext = { server: null as unknown as TestServer, who: {}, vars: {} };
beforeAll(async () => {
  f = await startDashboardServer(3);
  ctx.server = f.server;
  ctx.who = { admin: bearer(f.adminToken) };
}, 120_000);
afterAll(() => f?.dispose());

const admin = () => bearer(f.adminToken);

describe('every /dashboard/ route in /swagger.json', () => {
  it('answers 401 without a token and 403 for a user token', async () => {
    const doc = (await f.server.call<{ paths: Record<string, object> }>('GET', '/swagger.json')).json;
    const routes: [string, string][] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      if (!path.startsWith('/dashboard/')) continue;
      for (const method of Object.keys(ops)) routes.push([method.toUpperCase(), path.replace(/\{[^}]+\}/g, 'x')]);
    }
    expect(routes.length).toBeGreaterThanOrEqual(16);
    for (const [method, path] of routes) {
      const none = await f.server.call(method, path);
      expect(none.status, `${method} ${path} without a token`).toBe(401);
      expect(none.json.error.code).toBe('UNAUTHENTICATED');
      const user = await f.server.call(method, path, undefined, bearer(f.userToken));
      expect(user.status, `${method} ${path} with a user token`).toBe(403);
    }
  });
});

describe('rows', () => {
  it('creates, updates and deletes through the writer with hooks firing, and validates', async () => {
    const created = await f.server.call('POST', '/dashboard/rows', { table: 'events', object: { title: 'from the dashboard' } }, admin());
    expect(created.status, created.text).toBe(200);
    const id = created.json.data.id;
    const updated = await f.server.call('PATCH', '/dashboard/rows', { table: 'events', id, values: { kind: 'x' } }, admin());
    expect(updated.json.data.kind).toBe('x');
    expect((await f.server.call('DELETE', '/dashboard/rows', { table: 'events', id }, admin())).status).toBe(204);
    // The after-hooks queued audit rows for create, update and delete.
    await new Promise((r) => setTimeout(r, 200));
    const audit = await f.server.get('/db/list', { table: 'audit', where: { ref: { eq: id } } });
    expect(audit.json.data.items.map((r) => r.action).sort()).toEqual(['create', 'delete', 'update']);
  });

  it('lists any table with the where grammar, bypassing rules, and refuses writes to views', async () => {
    const secrets = await f.server.get('/dashboard/rows', { table: 'secrets' }, admin());
    expect(secrets.status).toBe(200);
    const page = await f.server.get('/dashboard/rows', { table: 'tasks', where: { priority: { gte: 1 } }, order_by: [{ column: 'priority', direction: 'desc' }], limit: 1 }, admin());
    expect(page.json.data.total).toBe(2);
    expect(page.json.data.items[0]!.priority).toBe(2);
    const users = await f.server.get('/dashboard/rows', { table: 'users' }, admin());
    expect(users.json.data.items[0]).not.toHaveProperty('password');
  });

  // One request, one refusal each (the admin bypasses rules, not validation, hooks or the read-only tables).
  scenarios('refusals to the admin', ctx, [
    {
      name: 'a before-hook rejects the update with its message',
      method: 'PATCH',
      path: '/dashboard/rows',
      as: 'admin',
      before: async (c) => {
        const created = await f.server.call('POST', '/dashboard/rows', { table: 'events', object: { title: 'to be refused' } }, admin());
        expect(created.status, created.text).toBe(200);
        c.vars.event = created.json.data.id;
      },
      body: (c) => ({ table: 'events', id: c.vars.event, values: { title: 'forbidden' } }),
      status: 400,
      code: 'HOOK_REJECTED',
      contains: ['"message":"title is forbidden"'],
    },
    {
      name: 'a value of the wrong kind names its path',
      method: 'PATCH',
      path: '/dashboard/rows',
      as: 'admin',
      body: (c) => ({ table: 'tasks', id: c.vars.event, values: { priority: 'high' } }),
      status: 400,
      code: 'BAD_REQUEST',
      after: async (r) => expect(r.json.error.details[0]!.path).toBe('/values/priority'),
    },
    {
      name: 'a missing required column names its path',
      method: 'POST',
      path: '/dashboard/rows',
      as: 'admin',
      body: { table: 'tasks', object: {} },
      status: 400,
      code: 'BAD_REQUEST',
      after: async (r) => expect(r.json.error.details[0]!.path).toBe('/object/title'),
    },
    { name: 'a view takes no writes', method: 'POST', path: '/dashboard/rows', as: 'admin', body: { table: 'task_board', object: {} }, status: 403, code: 'FORBIDDEN' },
    {
      name: 'an internal table takes no writes',
      method: 'DELETE',
      path: '/dashboard/rows',
      as: 'admin',
      before: async (c) => {
        const sessions = await f.server.get('/dashboard/rows', { table: '_sessions' }, admin());
        expect(sessions.json.data.total).toBeGreaterThan(0);
        c.vars.session = sessions.json.data.items[0]!.id;
      },
      body: (c) => ({ table: '_sessions', id: c.vars.session }),
      status: 403,
      code: 'FORBIDDEN',
    },
    { name: 'a page above the list limit', method: 'GET', path: '/dashboard/rows', as: 'admin', body: { table: 'tasks', limit: 5000 }, status: 400, code: 'BAD_REQUEST' },
    { name: 'an unknown cron job', method: 'POST', path: '/dashboard/cron/nope/run', as: 'admin', status: 404, code: 'NOT_FOUND' },
  ]);

  it('describes every table and view without password columns', async () => {
    const schema = (await f.server.call<{ data: { name: string; kind: string; columns: { name: string; kind: string; required: boolean }[] }[] }>('GET', '/dashboard/schema', undefined, admin())).json
      .data;
    const tasks = schema.find((c) => c.name === 'tasks')!;
    expect(tasks.columns.find((c) => c.name === 'title')).toMatchObject({ kind: 'text', required: true });
    expect(tasks.columns.find((c) => c.name === 'tags')).toMatchObject({ kind: 'list', required: false });
    expect(schema.find((c) => c.name === 'task_board')!.kind).toBe('view');
    expect(schema.find((c) => c.name === 'users')!.columns.some((c) => c.kind === 'password')).toBe(false);
  });
});

describe('users', () => {
  it('marks verified and revokes sessions (the user token stops working)', async () => {
    const users = (await f.server.get('/dashboard/rows', { table: 'users' }, admin())).json.data.items;
    const id = users[0]!.id;
    const verified = await f.server.call('POST', '/dashboard/users/verify', { table: 'users', id }, admin());
    expect(verified.json.data.isVerified).toBe(true);
    expect((await f.server.call('POST', '/dashboard/users/reset', { table: 'users', id }, admin())).status).toBe(204);
    const token = (await signIn(f.server, 'users', USER.email, USER.password)).accessToken;
    expect((await f.server.get('/db', { table: 'users', where: { id: { eq: id } } }, bearer(token))).status).toBe(200);
    const revoked = await f.server.call('POST', '/dashboard/users/revoke', { table: 'users', id }, admin());
    expect(revoked.json.data.revoked).toBeGreaterThanOrEqual(1);
    expect((await f.server.get('/db', { table: 'users', where: { id: { eq: id } } }, bearer(token))).status).toBe(401);
  });
});

describe('cron', () => {
  it('runs a job now, joins a run in progress, and lists recent runs', async () => {
    const [a, b] = await Promise.all([f.server.call('POST', '/dashboard/cron/heartbeat/run', undefined, admin()), f.server.call('POST', '/dashboard/cron/heartbeat/run', undefined, admin())]);
    expect(a.json.data.status).toBe('ok');
    expect(b.json.data.status).toBe('ok');
    const jobs = (await f.server.call('GET', '/dashboard/cron', undefined, admin())).json.data;
    expect(jobs[0]!.name).toBe('heartbeat');
    const runs = jobs[0]!.runs as { trigger: string; startedAt: string; finishedAt: string }[];
    expect(runs.some((r) => r.trigger === 'manual')).toBe(true);
    // Newest first; no run started before the previous one finished (src/cron/scheduler.test.ts joins a slow run).
    for (let i = 1; i < runs.length; i++) expect(runs[i - 1]!.startedAt >= runs[i]!.finishedAt).toBe(true);
  });
});

describe('photos', () => {
  it('lists photos, serves a thumbnail to the admin without canView or the photo rate limit, and deletes', async () => {
    // A fresh user token: the users test revoked the fixture's sessions.
    const user = (await signIn(f.server, 'users', USER.email, USER.password)).accessToken;
    const id = await uploadPhoto(f.server, user);
    const list = await f.server.call('GET', '/dashboard/photos?limit=10', undefined, admin());
    expect(list.json.data.items[0]).toMatchObject({ id, mimeType: 'image/png', width: 64, height: 48 });
    const thumb = await fetch(`${f.server.base}/dashboard/photos/${id}?thumb=32x32`, { headers: admin() });
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get('content-type')).toBe('image/png');
    expect((await sharp(Buffer.from(await thumb.arrayBuffer())).metadata()).width).toBe(32);
    expect((await f.server.call('GET', `/dashboard/photos/${id}`, undefined, bearer(user))).status).toBe(403);
    expect((await f.server.call('DELETE', `/dashboard/photos/${id}`, undefined, admin())).status).toBe(204);
    expect((await f.server.call('GET', `/img/${id}`)).status).toBe(404);
  });
});

describe('logs, live, history', () => {
  it('finds a request by its X-Request-Id, without bodies or tokens', async () => {
    await f.server.call('GET', `/db/list?body=${encodeURIComponent(JSON.stringify({ table: 'tasks', where: { title: { eq: 'secret-value' } } }))}`, undefined, { 'x-request-id': 'find-me-123' });
    const logs = await f.server.call('GET', '/dashboard/logs?requestId=find-me-123', undefined, admin());
    expect(logs.json.data).toHaveLength(1);
    expect(logs.json.data[0]).toMatchObject({ method: 'GET', route: 'GET /db/list', status: 200, requestId: 'find-me-123', ip: '127.0.0.1' });
    const all = JSON.stringify((await f.server.call('GET', '/dashboard/logs?limit=2000', undefined, admin())).json.data);
    expect(all).not.toContain('secret-value');
    expect(all).not.toContain(f.adminToken.slice(-20));
    const errors = await f.server.call<{ data: { status: number }[] }>('GET', '/dashboard/logs?statusClass=4xx', undefined, admin());
    expect(errors.json.data.every((e) => e.status >= 400 && e.status < 500)).toBe(true);
  });

  it('reports live streams by route and table, and a minute history', async () => {
    const ac = new AbortController();
    const res = await fetch(`${f.server.base}/db/stream/count?body=${encodeURIComponent(JSON.stringify({ table: 'tasks' }))}`, { signal: ac.signal });
    expect(res.status).toBe(200);
    const live = (await f.server.call('GET', '/dashboard/live', undefined, admin())).json.data;
    expect(live.open).toBe(1);
    expect(live.streams).toEqual([{ route: 'GET /db/stream/count', table: 'tasks', open: 1 }]);
    ac.abort();
    const history = (await f.server.call('GET', '/dashboard/history', undefined, admin())).json.data;
    expect(history.at(-1)!.requests).toBeGreaterThan(0);
  });
});

/** The dashboard page's answer: HTML that no other site may frame and that runs only its own scripts. */
const page = (path: string) => ({
  name: 'HTML with a strict CSP and no framing',
  method: 'GET',
  path,
  status: 200,
  answerHeaders: { 'content-type': /^text\/html/, 'x-frame-options': 'DENY' },
  lacks: [/<script(?![^>]*\bsrc=)/], // no inline script
  after: async (r: { headers: Headers }) => {
    const csp = r.headers.get('content-security-policy')!;
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
  },
});

scenarios('the page: /_ and its deep links', ctx, [
  page('/_'),
  page('/_/tables/tasks'),
  page('/_/cron'),
  page('/_/tables/tasks/extra'),
  { name: 'the script as JavaScript', method: 'GET', path: '/_/assets/app.js', status: 200, answerHeaders: { 'content-type': /javascript/ } },
  { name: 'an unknown asset', method: 'GET', path: '/_/assets/nope.js', status: 404 },
]);
