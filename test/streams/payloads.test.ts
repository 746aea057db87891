/**
 * End-to-end: the live-query routes (docs/reference/live.md): the payload on connect and after each change for
 * stream-one, stream-list and stream-count, and the SSE and NDJSON framing with heartbeats.
 * Denials and the per-change pipeline are in denials.test.ts; fan-out, caps and token expiry in
 * scale.test.ts. No timing assertions: every wait is for an event, with a generous timeout.
 */
import { describe, expect, it } from 'vitest';
import { data, useLiveWorld } from '../helpers/live.js';
import { tag as newTag } from '../helpers/rows.js';

const w = useLiveWorld();
const { stream, write, createTask } = w;
const tag = () => newTag('s');

describe('payloads on connect and after each change', () => {
  it('stream-one: null while no row matches, then the row, its updates, and null after delete', async () => {
    const t = tag();
    const c = await stream('/db/stream', { table: 'tasks', where: { title: { eq: t } } });
    expect(c.status).toBe(200);
    expect(data(await c.next())).toBeNull();
    const row = await createTask({ title: t, priority: 1 });
    expect(data(await c.next())).toEqual(row);
    const updated = await write('PATCH', '/db', { table: 'tasks', where: { id: { eq: row.id } }, updates: [{ column: 'priority', value: 5 }] }, w.alice.auth);
    const f = data(await c.next());
    expect(f).toEqual(updated);
    expect(f.priority).toBe(5);
    await write('DELETE', '/db', { table: 'tasks', where: { id: { eq: row.id } } }, w.alice.auth);
    expect(data(await c.next())).toBeNull();
  });

  it('stream-list: the page and its total, following where, order_by, limit and offset', async () => {
    const t = tag();
    const c = await stream('/db/stream/list', { table: 'tasks', where: { title: { startsWith: t } }, order_by: [{ column: 'priority', direction: 'desc' }], limit: 2 });
    expect(data(await c.next())).toEqual({ items: [], total: 0 });
    const p1 = await createTask({ title: `${t} one`, priority: 1 });
    expect(data(await c.next())).toEqual({ items: [p1], total: 1 });
    const p3 = await createTask({ title: `${t} three`, priority: 3 });
    expect(data(await c.next())).toEqual({ items: [p3, p1], total: 2 });
    const p2 = await createTask({ title: `${t} two`, priority: 2 });
    expect(data(await c.next())).toEqual({ items: [p3, p2], total: 3 });
    await write('DELETE', '/db', { table: 'tasks', where: { id: { eq: p3.id } } }, w.alice.auth);
    expect(data(await c.next())).toEqual({ items: [p2, p1], total: 2 });

    const paged = await stream('/db/stream/list', { table: 'tasks', where: { title: { startsWith: t } }, order_by: [{ column: 'priority' }], limit: 1, offset: 1 });
    expect(data(await paged.next())).toEqual({ items: [p2], total: 2 });
  });

  it('stream-count: the count after each create, delete many and update that moves rows in or out', async () => {
    const t = tag();
    const c = await stream('/db/stream/count', { table: 'tasks', where: { title: { eq: t }, isComplete: { eq: false } } });
    expect(data(await c.next())).toBe(0);
    const a = await createTask({ title: t });
    expect(data(await c.next())).toBe(1);
    await write('POST', '/db/many', { table: 'tasks', objects: [{ title: t }, { title: t }] });
    expect(data(await c.next())).toBe(3);
    await write('PATCH', '/db', { table: 'tasks', where: { id: { eq: a.id } }, updates: [{ column: 'isComplete', value: true }] }, w.alice.auth);
    expect(data(await c.next())).toBe(2);
    await write('DELETE', '/db/many', { table: 'tasks', where: { title: { eq: t } } }, w.alice.auth);
    expect(data(await c.next())).toBe(0);
  });

  it('streams a view: a write to a table it reads reaches the view stream', async () => {
    const t = tag();
    const c = await stream('/db/stream/list', { table: 'task_board', where: { title: { eq: t } } });
    expect(data(await c.next())).toEqual({ items: [], total: 0 });
    const row = await createTask({ title: t });
    expect(data(await c.next())).toEqual({ items: [{ id: row.id, title: t, isComplete: false, ownerEmail: null }], total: 1 });
    await write('PATCH', '/db', { table: 'tasks', where: { id: { eq: row.id } }, updates: [{ column: 'isComplete', value: true }] }, w.alice.auth);
    expect(data(await c.next()).items[0]!.isComplete).toBe(true);
  });

  it('pushes nothing for unrelated writes or for a change that leaves the result as it was', async () => {
    const t = tag();
    const first = await createTask({ title: t, priority: 1 });
    const one = await stream('/db/stream', { table: 'tasks', where: { title: { eq: t } } });
    const list = await stream('/db/stream/list', { table: 'tasks', where: { title: { eq: t } } });
    const count = await stream('/db/stream/count', { table: 'tasks', where: { title: { eq: t } } });
    for (const c of [one, list, count]) await c.next();
    // Other rows of the same table, other tables, and an update to a row the where does not hold.
    const other = await createTask({ title: `${t}-other` });
    await write('PATCH', '/db', { table: 'tasks', where: { id: { eq: other.id } }, updates: [{ column: 'priority', value: 9 }] }, w.alice.auth);
    await write('POST', '/db', { table: 'events', object: { title: t } });
    await write('POST', '/db', { table: 'big', object: { payload: t } });
    // A row inside the where changes in a way the count does not see.
    await write('PATCH', '/db', { table: 'tasks', where: { id: { eq: first.id } }, updates: [{ column: 'priority', value: 2 }] }, w.alice.auth);
    expect(data(await one.next()).priority).toBe(2);
    expect(data(await list.next()).items[0]!.priority).toBe(2);
    // The count's next payload must be the one the next create causes, not one per write above.
    await createTask({ title: t });
    expect(data(await count.next())).toBe(2);
    expect(count.frames).toHaveLength(2);
  });
});

describe('framing', () => {
  it('SSE: headers, `id: n` + `data:` frames with increasing ids, and `: ping` heartbeats', async () => {
    const t = tag();
    const c = await stream('/db/stream/count', { table: 'tasks', where: { title: { eq: t } } });
    expect(c.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(c.headers['cache-control']).toBe('no-cache');
    expect(c.headers['x-accel-buffering']).toBe('no');
    await c.next();
    await createTask({ title: t });
    await c.next();
    await c.whenHeartbeats(1);
    expect(c.raw.startsWith('id: 1\ndata: {"data":0}\n\n')).toBe(true);
    expect(c.raw).toContain('id: 2\ndata: {"data":1}\n\n');
    expect(c.raw).toContain(': ping\n\n');
    expect(c.frames.map((f) => f.id)).toEqual(['1', '2']);
  });

  it('is SSE for Accept: */* too', async () => {
    const c = await stream('/db/stream/count', { table: 'tasks', where: {} }, { headers: { accept: '*/*' } });
    expect(c.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(typeof data(await c.next())).toBe('number');
  });

  it('NDJSON with Accept: application/x-ndjson: one document per line, empty lines as heartbeats', async () => {
    const t = tag();
    const c = await stream('/db/stream/list', { table: 'tasks', where: { title: { eq: t } } }, { format: 'ndjson' });
    expect(c.headers['content-type']).toMatch(/^application\/x-ndjson/);
    expect(c.headers['cache-control']).toBe('no-cache');
    expect(c.headers['x-accel-buffering']).toBe('no');
    expect(data(await c.next())).toEqual({ items: [], total: 0 });
    const row = await createTask({ title: t });
    expect(data(await c.next())).toEqual({ items: [row], total: 1 });
    await c.whenHeartbeats(1);
    // Every line is one JSON document or empty (a heartbeat may fall between payloads).
    expect(c.raw).toMatch(/^(\{[^\n]*\}\n|\n)+$/);
    const docs = c.raw.split('\n').filter((l) => l !== '');
    expect(docs.map((l) => JSON.parse(l))).toEqual([{ data: { items: [], total: 0 } }, { data: { items: [row], total: 1 } }]);
    expect(c.raw).toContain('}\n\n');
  });
});
