/**
 * End-to-end: `/db/live` (docs/reference/live.md). Subscriptions on one WebSocket behave as their
 * stream routes: first payload, change-driven pushes, no identical consecutive payloads; a denied
 * subscribe is an error for that id only and the connection stays usable.
 */
import { describe, expect, it } from 'vitest';
import { useLiveWorld } from '../helpers/live.js';
import { liveSockets } from '../helpers/live-socket.js';
import { tag as newTag } from '../helpers/rows.js';

const w = useLiveWorld();
const tag = () => newTag('ws');
const live = liveSockets(() => w.s.base);

describe('/db/live', () => {
  it('answers get, list and count subscriptions with their first payloads, then pushes changes to the matching ones', async () => {
    const t = tag();
    const c = await live();
    c.subscribe('one', 'get', { table: 'tasks', where: { title: { eq: t } } });
    c.subscribe('page', 'list', { table: 'tasks', where: { title: { eq: t } }, limit: 10 });
    c.subscribe('n', 'count', { table: 'tasks', where: { title: { eq: t } } });
    c.subscribe('other', 'count', { table: 'tasks', where: { title: { eq: `${t}-other` } } });
    expect(await c.nextFor('one')).toEqual({ type: 'data', id: 'one', data: null });
    expect(await c.nextFor('page')).toEqual({ type: 'data', id: 'page', data: { items: [], total: 0 } });
    expect(await c.nextFor('n')).toEqual({ type: 'data', id: 'n', data: 0 });
    expect(await c.nextFor('other')).toEqual({ type: 'data', id: 'other', data: 0 });
    const row = await w.createTask({ title: t });
    expect((await c.nextFor('one')).data).toMatchObject({ id: row.id, title: t });
    expect((await c.nextFor('page')).data).toMatchObject({ items: [{ id: row.id }], total: 1 });
    expect((await c.nextFor('n')).data).toBe(1);
    // A change that does not alter `other`'s result pushes nothing to it (no identical payloads).
    await w.createTask({ title: `${t}-other` });
    expect((await c.nextFor('other')).data).toBe(1);
    expect(c.messages.filter((m) => m.id === 'other')).toHaveLength(2);
  });

  it('per-subscription errors (400, 401, 403, 404) end that id only; the connection stays usable', async () => {
    const c = await live();
    c.subscribe('bad-body', 'list', { table: 'tasks', where: { nope: { eq: 1 } } });
    c.subscribe('no-table', 'get', { table: 'nope', where: {} });
    c.subscribe('denied', 'list', { table: 'secrets', where: {} });
    c.send({ type: 'subscribe', id: 'bad-route', route: 'stream', body: { table: 'tasks' } });
    expect(await c.nextFor('bad-body')).toMatchObject({ type: 'error', id: 'bad-body', status: 400, error: { code: 'BAD_REQUEST' } });
    expect(await c.nextFor('no-table')).toMatchObject({ type: 'error', status: 404, error: { code: 'NOT_FOUND' } });
    expect(await c.nextFor('denied')).toMatchObject({ type: 'error', status: 403, error: { code: 'FORBIDDEN' } });
    expect(await c.nextFor('bad-route')).toMatchObject({ type: 'error', status: 400, error: { code: 'BAD_REQUEST' } });
    // A row failing the row filter on the first query: 403, like the stream route.
    const note = await w.write('POST', '/db', { table: 'notes', object: { body: tag() } }, w.alice.auth);
    const bob = await live(w.bob.auth);
    bob.subscribe('theirs', 'get', { table: 'notes', where: { id: { eq: note.id } } });
    expect(await bob.nextFor('theirs')).toMatchObject({ type: 'error', status: 403, error: { code: 'FORBIDDEN' } });
    const badToken = await live({ authorization: 'Bearer nope' });
    badToken.subscribe('x', 'count', { table: 'tasks', where: {} });
    expect(await badToken.nextFor('x')).toMatchObject({ type: 'error', status: 401, error: { code: 'INVALID_TOKEN' } });
    // Still usable: a good subscription on the same connections.
    c.subscribe('ok', 'count', { table: 'tasks', where: {} });
    expect((await c.nextFor('ok')).type).toBe('data');
    bob.subscribe('mine', 'count', { table: 'notes', where: {} });
    expect((await bob.nextFor('mine')).type).toBe('data');
  });

  it('messages it does not understand get an error without id; ping answers pong; a reused id is refused', async () => {
    const c = await live();
    const errors = () => c.messages.filter((m) => m.type === 'error' && m.id === undefined).length;
    c.send('{not json');
    await c.next((m) => m.type === 'error' && m.id === undefined);
    c.send({ type: 'shout' });
    c.send({ type: 'subscribe', route: 'get', body: {} });
    c.send({ type: 'subscribe', id: 'x'.repeat(65), route: 'get', body: {} });
    await c.next(() => errors() === 4);
    expect(c.messages.filter((m) => m.type === 'error').every((m) => m.status === 400 && m.error?.code === 'BAD_REQUEST')).toBe(true);
    c.send({ type: 'ping' });
    await c.next((m) => m.type === 'pong');
    c.subscribe('same', 'count', { table: 'tasks', where: {} });
    await c.nextFor('same');
    c.subscribe('same', 'count', { table: 'tasks', where: {} });
    await c.next(() => errors() === 5);
  });

  it('holds 200 subscriptions per connection by default; the 201st is a 429 for that id, and an unsubscribe makes room', async () => {
    const c = await live();
    for (let i = 0; i < 201; i++) c.subscribe(`c${i}`, 'count', { table: 'tasks', where: { priority: { eq: i } } });
    for (let i = 0; i < 200; i++) expect((await c.nextFor(`c${i}`)).type).toBe('data');
    expect(await c.nextFor('c200')).toMatchObject({ type: 'error', status: 429, error: { code: 'RATE_LIMITED' } });
    c.send({ type: 'unsubscribe', id: 'c0' });
    c.subscribe('again', 'count', { table: 'tasks', where: {} });
    expect((await c.nextFor('again')).type).toBe('data');
  });

  it('unsubscribe stops the pushes of that id only', async () => {
    const t = tag();
    const c = await live();
    c.subscribe('a', 'count', { table: 'tasks', where: { title: { eq: t } } });
    c.subscribe('b', 'count', { table: 'tasks', where: { title: { eq: t } } });
    await c.nextFor('a');
    await c.nextFor('b');
    c.send({ type: 'unsubscribe', id: 'a' });
    c.send({ type: 'ping' });
    await c.next((m) => m.type === 'pong');
    await w.createTask({ title: t });
    expect((await c.nextFor('b')).data).toBe(1);
    expect(c.messages.filter((m) => m.id === 'a')).toHaveLength(1);
  });

  it('the 101 carries X-Request-Id (echoed when sent), like every answer', async () => {
    const c = await live({ 'x-request-id': 'live-upgrade-1' });
    expect(c.ws.protocol).toBe('tablebase.v1');
    expect(c.upgradeHeaders['x-request-id']).toBe('live-upgrade-1');
  });

  it('is documented (a GET answering 101 with the message shapes); a GET that does not upgrade is a 400', async () => {
    const plain = await w.s.call('GET', '/db/live');
    expect(plain.status).toBe(400);
    expect(plain.json.error.code).toBe('BAD_REQUEST');
    const doc = await w.s.call<{ paths: Record<string, { get: { responses: Record<string, { content: Record<string, { schema: { anyOf: { title?: string }[] } }> }> } }> }>('GET', '/swagger.json');
    const answer = doc.json.paths['/db/live']!.get.responses['101']!;
    const titles = (type: string) => answer.content[type]!.schema.anyOf.map((s) => s.title);
    expect(titles('application/vnd.tablebase.live-client+json')).toEqual(['Auth', 'Subscribe', 'Unsubscribe', 'Ping']);
    expect(titles('application/vnd.tablebase.live-server+json')).toEqual(['Data', 'Error', 'Pong']);
  });
});
