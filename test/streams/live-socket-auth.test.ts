/**
 * End-to-end: `/db/live` shares the stream routes' rate-limit counters (a subscribe counts like
 * one request of its route), and an `auth` message re-authorizes every open subscription
 * (docs/reference/live.md).
 */
import { describe, expect, it } from 'vitest';
import { useLiveWorld } from '../helpers/live.js';
import { liveSockets } from '../helpers/live-socket.js';
import { tag as newTag } from '../helpers/rows.js';
import { signUp } from '../helpers/users.js';

const w = useLiveWorld();
const tag = () => newTag('wsa');
const live = liveSockets(() => w.s.base);
const token = (auth: Record<string, string>) => auth.authorization!.slice('Bearer '.length);

describe('/db/live rate limits', () => {
  it('a subscribe counts against the stream route policy, and the same counter serves both', async () => {
    // `limited` allows 3 counts per 10 s per IP: one stream route and two subscribes use them up.
    const body = { table: 'limited', where: {} };
    const first = await w.stream('/db/stream/count', body);
    expect(first.status).toBe(200);
    const c = await live();
    c.subscribe('a', 'count', body);
    c.subscribe('b', 'count', body);
    expect((await c.nextFor('a')).type).toBe('data');
    expect((await c.nextFor('b')).type).toBe('data');
    c.subscribe('c', 'count', body);
    expect(await c.nextFor('c')).toMatchObject({ type: 'error', id: 'c', status: 429, error: { code: 'RATE_LIMITED' } });
    const refused = await w.stream('/db/stream/count', body);
    await refused.whenEnded();
    expect(refused.status).toBe(429);
    // The connection is still usable; another table's counter is untouched.
    c.subscribe('d', 'count', { table: 'tasks', where: {} });
    expect((await c.nextFor('d')).type).toBe('data');
  });
});

describe('/db/live auth', () => {
  it('an auth message replaces the token: later subscribes use it', async () => {
    const c = await live();
    c.subscribe('anon', 'count', { table: 'notes', where: {} });
    expect(await c.nextFor('anon')).toMatchObject({ status: 403, error: { code: 'FORBIDDEN' } });
    c.send({ type: 'auth', token: token(w.alice.auth) });
    c.subscribe('signed', 'count', { table: 'notes', where: {} });
    expect((await c.nextFor('signed')).type).toBe('data');
  });

  it('re-authorizes every open subscription: one the new token may not see ends, the others stay', async () => {
    const note = await w.write('POST', '/db', { table: 'notes', object: { body: tag() } }, w.alice.auth);
    const t = tag();
    const c = await live(w.alice.auth);
    c.subscribe('note', 'get', { table: 'notes', where: { id: { eq: note.id } } });
    c.subscribe('tasks', 'count', { table: 'tasks', where: { title: { eq: t } } });
    expect((await c.nextFor('note')).data).toMatchObject({ id: note.id });
    expect((await c.nextFor('tasks')).data).toBe(0);
    c.send({ type: 'auth', token: token(w.bob.auth) });
    expect(await c.nextFor('note')).toMatchObject({ type: 'error', id: 'note', status: 403, error: { code: 'FORBIDDEN' } });
    await w.createTask({ title: t });
    expect((await c.nextFor('tasks')).data).toBe(1);
  });

  it('a bad token in auth is an error without id; the previous token stays in effect', async () => {
    const t = tag();
    const c = await live(w.alice.auth);
    c.subscribe('notes', 'count', { table: 'notes', where: { body: { eq: t } } });
    expect((await c.nextFor('notes')).data).toBe(0);
    c.send({ type: 'auth', token: 'not-a-token' });
    expect(await c.next((m) => m.type === 'error' && m.id === undefined)).toMatchObject({ status: 401, error: { code: 'INVALID_TOKEN' } });
    c.send({ type: 'auth' });
    expect(await c.next((m) => m.type === 'error' && m.id === undefined && m.status === 400)).toMatchObject({ error: { code: 'BAD_REQUEST' } });
    await w.write('POST', '/db', { table: 'notes', object: { body: t } }, w.alice.auth);
    expect((await c.nextFor('notes')).data).toBe(1);
  });
});

describe('/db/live per-change checks (as the stream routes)', () => {
  it('a row that now fails the row filter ends that subscription with 403; a revoked token ends its subscriptions with 401', async () => {
    const t = tag();
    const carol = await signUp(w.s, `carol.${t}@example.com`);
    const c = await live(carol.auth);
    c.subscribe('notes', 'list', { table: 'notes', where: { body: { eq: t } } });
    c.subscribe('tasks', 'count', { table: 'tasks', where: { title: { eq: t } } });
    expect((await c.nextFor('notes')).data).toEqual({ items: [], total: 0 });
    expect((await c.nextFor('tasks')).data).toBe(0);
    await w.write('POST', '/db', { table: 'notes', object: { body: t } }, w.alice.auth);
    expect(await c.nextFor('notes')).toMatchObject({ type: 'error', id: 'notes', status: 403, error: { code: 'FORBIDDEN' } });
    await w.createTask({ title: t });
    expect((await c.nextFor('tasks')).data).toBe(1);
    const out = await w.s.call('POST', '/auth/logout', undefined, carol.auth);
    expect(out.status, out.text).toBe(204);
    await w.createTask({ title: t });
    expect(await c.nextFor('tasks')).toMatchObject({ type: 'error', id: 'tasks', status: 401, error: { code: 'INVALID_TOKEN' } });
    c.send({ type: 'ping' });
    await c.next((m) => m.type === 'pong');
  });
});
