/**
 * End-to-end: live queries that are refused (docs/reference/live.md, docs/reference/rate-limits.md): ordinary JSON errors before streaming,
 * and the pipeline run again on each change (row filter, revoked token), including changes that
 * after-hooks make.
 */
import { describe, expect, it } from 'vitest';
import { expectError as expectEnvelope } from '../helpers/expect.js';
import { data, useLiveWorld } from '../helpers/live.js';
import { tag as newTag } from '../helpers/rows.js';
import type { StreamClient } from '../helpers/stream-client.js';
import { signUp } from '../helpers/users.js';

const w = useLiveWorld();
const { stream, write, createTask } = w;
const tag = () => newTag('s');

describe('denials answer ordinary JSON before streaming', () => {
  const expectError = (c: StreamClient, status: number, code: string) => {
    expectEnvelope({ status: c.status, json: c.json, text: c.raw }, status, code);
    expect(c.headers['content-type']).toMatch(/^application\/json/);
    expect(c.frames).toHaveLength(0);
  };
  const whenDone = async (c: StreamClient) => {
    await c.whenEnded();
    return c;
  };

  it('403 when a table rule denies, and when the first result fails the row filter', async () => {
    for (const route of ['/db/stream', '/db/stream/list', '/db/stream/count']) {
      expectError(await whenDone(await stream(route, { table: 'secrets', where: {} })), 403, 'FORBIDDEN');
      expectError(await whenDone(await stream(route, { table: 'notes', where: {} })), 403, 'FORBIDDEN');
    }
    expectError(await whenDone(await stream('/db/stream/list', { table: 'users', where: {} }, { headers: w.alice.auth })), 403, 'FORBIDDEN');
    const note = await write('POST', '/db', { table: 'notes', object: { body: tag() } }, w.alice.auth);
    expectError(await whenDone(await stream('/db/stream', { table: 'notes', where: { id: { eq: note.id } } }, { headers: w.bob.auth })), 403, 'FORBIDDEN');
    expectError(await whenDone(await stream('/db/stream', { table: 'tasks', where: {} }, { headers: { authorization: 'Bearer nope' } })), 401, 'INVALID_TOKEN');
  });

  it('400 for a bad body and 404 for an unknown table', async () => {
    const bad = [
      ['/db/stream', { table: 'tasks' }],
      ['/db/stream', { table: 'tasks', where: { nope: { eq: 1 } } }],
      ['/db/stream/list', { table: 'tasks', where: { title: { like: 'x' } } }],
      ['/db/stream/list', { table: 'tasks', limit: 5000 }],
      ['/db/stream/count', { where: {} }],
    ] as const;
    for (const [route, body] of bad) expectError(await whenDone(await stream(route, body)), 400, 'BAD_REQUEST');
    const unparsable = await fetch(`${w.s.base}/db/stream/list?body=%7Bnot-json`);
    expect(unparsable.status).toBe(400);
    expect((await unparsable.json()).error.code).toBe('BAD_REQUEST');
    expectError(await whenDone(await stream('/db/stream/list', { table: 'no_such_table' })), 404, 'NOT_FOUND');
  });

  it('429 over the list policy, which streams share with /db/list (docs/reference/rate-limits.md)', async () => {
    const t = tag();
    for (let i = 0; i < 2; i++) expect((await w.s.get('/db/list', { table: 'limited', where: { title: { eq: t } } })).status).toBe(200);
    const third = await stream('/db/stream/list', { table: 'limited', where: { title: { eq: t } } });
    expect(third.status).toBe(200);
    const fourth = await whenDone(await stream('/db/stream/list', { table: 'limited', where: { title: { eq: t } } }));
    expectError(fourth, 429, 'RATE_LIMITED');
    expect(Number(fourth.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });
});

describe('the pipeline runs again on each change', () => {
  it('a row that now fails the row filter ends the stream with one error event', async () => {
    const t = tag();
    const sse = await stream('/db/stream/list', { table: 'notes', where: { body: { eq: t } } }, { headers: w.bob.auth });
    const nd = await stream('/db/stream/list', { table: 'notes', where: { body: { eq: t } } }, { headers: w.bob.auth, format: 'ndjson' });
    expect(data(await sse.next())).toEqual({ items: [], total: 0 });
    expect(data(await nd.next())).toEqual({ items: [], total: 0 });
    await write('POST', '/db', { table: 'notes', object: { body: t } }, w.alice.auth);
    const err = await sse.next();
    expect(err.event).toBe('error');
    expect(err.json.error.code).toBe('FORBIDDEN');
    expect((await nd.next()).json.error.code).toBe('FORBIDDEN');
    await sse.whenEnded();
    await nd.whenEnded();
    expect(sse.raw).toMatch(/event: error\ndata: \{"error":\{"code":"FORBIDDEN"[^\n]*\}\n\n$/);
  });

  it('a token revoked by logout ends the stream with INVALID_TOKEN at the next change', async () => {
    const t = tag();
    const carol = await signUp(w.s, `carol.${t}@example.com`);
    const c = await stream('/db/stream/count', { table: 'tasks', where: { title: { eq: t } } }, { headers: carol.auth });
    expect(data(await c.next())).toBe(0);
    await createTask({ title: t });
    expect(data(await c.next())).toBe(1);
    const out = await w.s.call('POST', '/auth/logout', undefined, carol.auth);
    expect(out.status, out.text).toBe(204);
    await createTask({ title: t });
    const err = await c.next();
    expect(err.event).toBe('error');
    expect(err.json.error.code).toBe('INVALID_TOKEN');
    await c.whenEnded();
    // A stream without a token on the same query is unaffected.
    const anon = await stream('/db/stream/count', { table: 'tasks', where: { title: { eq: t } } });
    expect(data(await anon.next())).toBe(2);
  });

  it('changes made by after-hooks reach streams of the table they write', async () => {
    const creates = await stream('/db/stream/list', { table: 'audit', where: { action: { eq: 'create' } }, order_by: [{ column: 'createdAt', direction: 'desc' }], limit: 5 });
    await creates.next();
    const ev = await write('POST', '/db', { table: 'events', object: { title: tag() } });
    const f = await creates.nextWhere((x) => data(x).items.some((a) => a.ref === ev.id));
    expect(data(f).items.find((a) => a.ref === ev.id)).toMatchObject({ action: 'create', ref: ev.id });

    const trail = await stream('/db/stream/list', { table: 'audit', where: { ref: { eq: ev.id } }, order_by: [{ column: 'createdAt' }] });
    await trail.nextWhere((x) => data(x).total === 1);
    await write('PATCH', '/db', { table: 'events', where: { id: { eq: ev.id } }, updates: [{ column: 'kind', value: 'x' }] });
    await trail.nextWhere((x) => data(x).total === 2);
    await write('DELETE', '/db', { table: 'events', where: { id: { eq: ev.id } } });
    const last = await trail.nextWhere((x) => data(x).total === 3);
    expect(data(last).items.map((a) => a.action)).toEqual(['create', 'update', 'delete']);
  });
});
