/**
 * End-to-end: per-table hooks of the conformance project (docs/reference/rules-and-hooks.md, docs/reference/conformance.md). Before-hooks
 * reject with 400 HOOK_REJECTED and nothing is written; after-success hooks queue trusted writes
 * that run once the request has committed (so the tests poll for them); one request causes at most
 * 10 additional mutations, counted across the whole request, and a dropped one is logged.
 */
import { describe, expect, it } from 'vitest';
import { useServer } from './helpers/lifecycle.js';
import type { Envelope, Row } from './helpers/server.js';
import { pause, until } from './helpers/poll.js';
import { createRow, listRows, tag as newTag } from './helpers/rows.js';
import { scenarios, type ScenarioContext } from './helpers/scenario.js';

const s = useServer();
/** A title prefix no other test uses. */
const tag = () => newTag('h');
const list = <T = Row>(table: string, where: object) => listRows<T>(s, table, where);

const audit = (refs: string[]) => list('audit', { ref: { in: refs } });
const eventsTagged = (t: string) => list('events', { title: { startsWith: t } });

/** Warnings the server logged for dropped hook mutations so far. */
const drops = () =>
  s
    .log()
    .split('\n')
    .filter((line) => line.includes('hook mutation dropped')).length;

const createEvent = (object: Record<string, unknown>) => createRow(s, 'events', object);

function expectRejected(r: { status: number; json: Envelope; text: string }, message: string): void {
  expect(r.status, r.text).toBe(400);
  expect(r.json.error).toEqual({ code: 'HOOK_REJECTED', message });
}

describe('before-hooks: 400 HOOK_REJECTED with the hook message, nothing written', () => {
  it('beforeCreate rejects a create and a whole create many', async () => {
    const t = tag();
    expectRejected(await s.call('POST', '/db', { table: 'events', object: { title: 'forbidden' } }), 'title is forbidden');
    // The first object would be fine; the batch is all-or-nothing.
    expectRejected(await s.call('POST', '/db/many', { table: 'events', objects: [{ title: `${t} ok` }, { title: 'forbidden' }, { title: `${t} ok2` }] }), 'title is forbidden');
    expect(await eventsTagged(t)).toEqual([]);
    expect(await list('events', { title: { eq: 'forbidden' } })).toEqual([]);
  });

  it('beforeUpdate rejects an update and an update many; the rows are unchanged and no audit row is queued', async () => {
    const t = tag();
    const a = await createEvent({ title: `${t} a`, kind: 'k' });
    const b = await createEvent({ title: `${t} b` });
    await until(
      () => audit([a.id, b.id]),
      (rows) => rows.length === 2,
      'the two create audits',
    );

    expectRejected(
      await s.call('PATCH', '/db', {
        table: 'events',
        where: { id: { eq: a.id } },
        updates: [
          { column: 'kind', value: 'changed' },
          { column: 'title', value: 'forbidden' },
        ],
      }),
      'title is forbidden',
    );
    expectRejected(await s.call('PATCH', '/db/many', { table: 'events', where: { title: { startsWith: t } }, updates: [{ column: 'title', value: 'forbidden' }] }), 'title is forbidden');
    const after = await eventsTagged(t);
    expect(after).toEqual([a, b]);

    // A later successful update of `a` is audited once: the rejected ones queued nothing before it.
    const ok = await s.call('PATCH', '/db', { table: 'events', where: { id: { eq: a.id } }, updates: [{ column: 'kind', value: 'changed' }] });
    expect(ok.status, ok.text).toBe(200);
    const rows = await until(
      () => audit([a.id]),
      (r) => r.some((x) => x.action === 'update'),
      'the update audit',
    );
    expect(rows.map((x) => x.action)).toEqual(['create', 'update']);
  });

  it('beforeDelete rejects deleting a locked event, and a delete many that includes one', async () => {
    const t = tag();
    const open = await createEvent({ title: `${t} open`, kind: 'open' });
    const locked = await createEvent({ title: `${t} locked`, kind: 'locked' });
    expectRejected(await s.call('DELETE', '/db', { table: 'events', where: { id: { eq: locked.id } } }), 'event is locked');
    // `open` comes first in the default order, so it was deleted inside the transaction before
    // the hook refused `locked`: the rollback must bring it back.
    expectRejected(await s.call('DELETE', '/db/many', { table: 'events', where: { title: { startsWith: t } } }), 'event is locked');
    expect((await eventsTagged(t)).map((e) => e.id)).toEqual([open.id, locked.id]);

    expect((await s.call('DELETE', '/db', { table: 'events', where: { id: { eq: open.id } } })).status).toBe(204);
    const rows = await until(
      () => audit([open.id, locked.id]),
      (r) => r.some((x) => x.action === 'delete'),
      'the delete audit',
    );
    expect(rows.filter((x) => x.action === 'delete').map((x) => x.ref)).toEqual([open.id]);
    expect((await eventsTagged(t)).map((e) => e.id)).toEqual([locked.id]);
  });
});

const ctx: ScenarioContext = { server: s, who: {}, vars: {} };
const event = (c: ScenarioContext) => ({ table: 'events', where: { id: { eq: c.vars.event } } });

scenarios('after-hooks: audit rows follow a create, an update and a delete, in order', ctx, [
  {
    name: 'afterCreateSuccess audits the create',
    method: 'POST',
    path: '/db',
    body: { table: 'events', object: { title: `${tag()} e` } },
    status: 200,
    fires: [{ audit: ['create'] }],
    after: async (r, c) => void (c.vars.event = r.json.data.id),
  },
  {
    name: 'afterUpdateSuccess audits the update',
    method: 'PATCH',
    path: '/db',
    body: (c) => ({ ...event(c), updates: [{ column: 'title', value: `${tag()} renamed` }] }),
    status: 200,
    fires: [{ audit: ['create', 'update'] }],
  },
  {
    name: 'afterDeleteSuccess audits the delete, through the trusted path (ids au_…)',
    method: 'DELETE',
    path: '/db',
    body: event,
    status: 204,
    fires: [{ audit: ['create', 'update', 'delete'], ref: (c) => c.vars.event! }],
    after: async (_r, c) => {
      for (const x of await audit([c.vars.event!])) expect(x.id).toMatch(/^au_/);
    },
  },
  // Clients may not write `audit` (rules deny): the rows above came through the trusted hook path.
  { name: 'clients may not write audit rows', method: 'POST', path: '/db', body: (c) => ({ table: 'audit', object: { action: 'create', ref: c.vars.event } }), status: 403 },
  {
    name: 'a chain create is capped at 10 more mutations; the dropped one is logged',
    method: 'POST',
    path: '/db',
    body: { table: 'chain', object: { depth: 5000 } },
    status: 200,
    like: { depth: 5000 },
    fires: [{ logged: 'hook mutation dropped' }],
  },
]);

describe('after-hooks: queued trusted writes', () => {
  it('update many and delete many fire the hooks once per row', async () => {
    const t = tag();
    const rows = await Promise.all([1, 2, 3].map((i) => createEvent({ title: `${t} ${i}` })));
    const ids = rows.map((r) => r.id);
    await until(
      () => audit(ids),
      (r) => r.length === 3,
      'three create audits',
    );
    const up = await s.call('PATCH', '/db/many', { table: 'events', where: { title: { startsWith: t } }, updates: [{ column: 'kind', value: 'x' }] });
    expect(up.status, up.text).toBe(200);
    expect(up.json.data).toHaveLength(3);
    await until(
      () => audit(ids),
      (r) => r.length === 6,
      'three update audits',
    );
    expect((await s.call('DELETE', '/db/many', { table: 'events', where: { title: { startsWith: t } } })).status).toBe(204);
    const all = await until(
      () => audit(ids),
      (r) => r.length === 9,
      'three delete audits',
    );
    for (const id of ids) expect(all.filter((x) => x.ref === id).map((x) => x.action)).toEqual(['create', 'update', 'delete']);
  });

  it('chain: one create yields exactly 11 rows (the 10-mutation cap stops it, logged)', async () => {
    const dropsBefore = drops();
    const r = await s.call('POST', '/db', { table: 'chain', object: { depth: 1000 } });
    expect(r.status, r.text).toBe(200);
    expect(r.json.data).toMatchObject({ depth: 1000 });
    // The 11th row's hook is the one dropped; once that is logged, the chain is over.
    await until(
      async () => drops(),
      (n) => n >= dropsBefore + 1,
      'the dropped 12th mutation to be logged',
    );
    const rows = await list<{ depth: number }>('chain', { depth: { gte: 1000, lt: 1100 } });
    expect(rows.map((x) => x.depth)).toEqual([1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 1010]);
    await pause(300);
    expect(await list('chain', { depth: { gte: 1000, lt: 1100 } })).toHaveLength(11);
  });
});

describe('create many: per-row hooks, one budget of 10 for the whole request (docs/reference/rules-and-hooks.md)', () => {
  it('fires afterCreateSuccess once per row', async () => {
    const t = tag();
    const r = await s.call('POST', '/db/many', { table: 'events', objects: [1, 2, 3].map((i) => ({ title: `${t} ${i}` })) });
    expect(r.status, r.text).toBe(200);
    const ids: string[] = r.json.data.map((x) => x.id);
    const rows = await until(
      () => audit(ids),
      (a) => a.length === 3,
      'three audits',
    );
    expect(rows.map((x) => x.ref).sort()).toEqual([...ids].sort());
    expect(rows.every((x) => x.action === 'create')).toBe(true);
  });

  it('12 rows in one request queue only 10 audit rows; the answer is unaffected', async () => {
    const t = tag();
    const dropsBefore = drops();
    const r = await s.call('POST', '/db/many', { table: 'events', objects: Array.from({ length: 12 }, (_, i) => ({ title: `${t} ${i}` })) });
    expect(r.status, r.text).toBe(200);
    expect(r.json.data).toHaveLength(12);
    const ids: string[] = r.json.data.map((x) => x.id);
    await until(
      async () => drops(),
      (n) => n >= dropsBefore + 2,
      'two dropped mutations to be logged',
    );
    const rows = await until(
      () => audit(ids),
      (a) => a.length >= 10,
      'ten audits',
    );
    await pause(300);
    expect(await audit(ids)).toHaveLength(10);
    expect(new Set(rows.map((x) => x.ref)).size).toBe(10);
    expect(await eventsTagged(t)).toHaveLength(12);
  });

  it('two chain rows in one request share the budget: 12 rows in all, not 22', async () => {
    const dropsBefore = drops();
    const r = await s.call('POST', '/db/many', { table: 'chain', objects: [{ depth: 2000 }, { depth: 3000 }] });
    expect(r.status, r.text).toBe(200);
    // Each branch's last row has its next mutation dropped: two warnings end the request's work.
    await until(
      async () => drops(),
      (n) => n >= dropsBefore + 2,
      'both branches to hit the cap',
    );
    const rows = await list<{ depth: number }>('chain', { or: [{ depth: { gte: 2000, lt: 2100 } }, { depth: { gte: 3000, lt: 3100 } }] });
    expect(rows).toHaveLength(12);
    // Each branch grew one depth at a time from its own start.
    for (const start of [2000, 3000]) {
      const depths = rows
        .map((x) => x.depth)
        .filter((d) => d >= start && d < start + 100)
        .sort((x, y) => x - y);
      expect(depths).toEqual(depths.map((_, i) => start + i));
    }
    await pause(300);
    expect(await list('chain', { or: [{ depth: { gte: 2000, lt: 2100 } }, { depth: { gte: 3000, lt: 3100 } }] })).toHaveLength(12);
  });
});
