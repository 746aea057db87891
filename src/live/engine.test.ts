import { describe, expect, it, vi } from 'vitest';
import { ApiError } from '../core/errors.js';
import { createLiveEngine, type LiveEngine, type LiveEngineOptions } from './engine.js';
import { FakeDb, settle } from './fake-db.js';
import { BOARD, insert, query, remove, task, TASKS, update, USERS } from './test-fixtures.js';
import { serializePayload, type LiveQuery, type Subscriber } from './types.js';

interface Client {
  pushes: string[];
  failures: ApiError[];
  ended: number;
  unsubscribe: () => void;
}

function setup(options: Partial<LiveEngineOptions> = {}) {
  const db = new FakeDb();
  const log = { error: vi.fn(), warn: vi.fn() };
  const engine: LiveEngine = createLiveEngine({ run: db.run, log, ...options });
  db.engine = engine;
  /** Subscribes like a route would: first answer computed now, `since` read before it. */
  const open = (q: LiveQuery, extra: Partial<Subscriber> = {}, ip = '10.0.0.1'): Client => {
    const since = engine.version;
    const initial = db.answer(q);
    const c: Client = { pushes: [], failures: [], ended: 0, unsubscribe: () => {} };
    c.unsubscribe = engine.subscribe(q, { initial, since, push: (json) => c.pushes.push(json), fail: (err) => c.failures.push(err), ...extra }, ip);
    return c;
  };
  return { db, engine, log, open };
}

const data = (json: string | undefined) => (json === undefined ? undefined : JSON.parse(json).data);

describe('live engine: which changes re-run which queries', () => {
  it('writes no subscription can see cause zero re-runs', async () => {
    const { db, engine, open } = setup();
    const a = open(query('list', TASKS, { ownerId: { eq: 'a' } }));
    const other = task({ ownerId: 'b' });
    db.apply(insert(other));
    db.apply(update(other, { ...other, title: 'changed' }));
    db.apply(insert({ id: 'us_1', email: 'x@y.z' }, 'users'));
    db.apply(remove(other));
    await settle(engine);
    expect(db.runs).toBe(0);
    expect(a.pushes).toEqual([]);
  });

  it('a matching insert re-runs the query once and pushes the new page', async () => {
    const { db, engine, open } = setup();
    const a = open(query('list', TASKS, { ownerId: { eq: 'a' } }));
    const row = task({ ownerId: 'a' });
    db.apply(insert(row));
    await settle(engine);
    expect(db.runs).toBe(1);
    expect(a.pushes).toHaveLength(1);
    expect(data(a.pushes[0])).toEqual({ items: [row], total: 1 });
  });

  it('a row leaving the where (before matches, after not) re-runs the query', async () => {
    const { db, engine, open } = setup();
    const row = task({ ownerId: 'a' });
    db.apply(insert(row));
    const a = open(query('count', TASKS, { ownerId: { eq: 'a' } }));
    db.apply(update(row, { ...row, ownerId: 'b' }));
    await settle(engine);
    expect(a.pushes.map(data)).toEqual([0]);
  });

  it('queries without an indexable condition test the change in memory and skip non-matches', async () => {
    const { db, engine, open } = setup();
    open(query('list', TASKS, { priority: { gt: 5 } }));
    db.apply(insert(task({ priority: 1 })));
    await settle(engine);
    expect(db.runs).toBe(0);
    expect(engine.stats().matchEvaluations).toBe(1);
    db.apply(insert(task({ priority: 6 })));
    await settle(engine);
    expect(db.runs).toBe(1);
  });

  it('indexes `in` lists and never visits `in: []`', async () => {
    const { db, engine, open } = setup();
    const a = open(query('count', TASKS, { ownerId: { in: ['a', 'b'] } }));
    open(query('count', TASKS, { ownerId: { in: [] } }));
    db.apply(insert(task({ ownerId: 'c' })));
    await settle(engine);
    expect(engine.stats().matchEvaluations).toBe(0);
    db.apply(insert(task({ ownerId: 'b' })));
    await settle(engine);
    expect(engine.stats().matchEvaluations).toBe(1);
    expect(a.pushes.map(data)).toEqual([1]);
  });

  it('identical subscriptions share one query, one run and one payload string', async () => {
    const { db, engine, open } = setup();
    const clients = [
      open(query('list', TASKS, { ownerId: { eq: 'a' }, isComplete: { eq: false } })),
      open(query('list', TASKS, { isComplete: { eq: false }, ownerId: { eq: 'a' } }), {}, '10.0.0.2'),
      open(query('list', TASKS, { ownerId: { eq: 'a' }, isComplete: { eq: false } }), {}, '10.0.0.3'),
    ];
    expect(engine.stats()).toMatchObject({ open: 3, queries: 1 });
    db.apply(insert(task({ ownerId: 'a' })));
    await settle(engine);
    expect(db.runs).toBe(1);
    for (const c of clients) expect(c.pushes).toEqual(clients[0]!.pushes);
    expect(clients[0]!.pushes).toHaveLength(1);
  });

  it('a burst of 100 changes costs at most a couple of runs', async () => {
    const { db, engine, open } = setup();
    const a = open(query('count', TASKS, { ownerId: { eq: 'a' } }));
    for (let i = 0; i < 100; i++) db.apply(insert(task({ ownerId: 'a' })));
    await settle(engine);
    expect(db.runs).toBe(1);
    expect(a.pushes.map(data)).toEqual([100]);
  });

  it('changes during a run cause exactly one more run, and the last payload is current', async () => {
    const { db, engine, open } = setup();
    const a = open(query('count', TASKS, { ownerId: { eq: 'a' } }));
    let release!: () => void;
    db.gate = new Promise((r) => (release = r));
    db.apply(insert(task({ ownerId: 'a' })));
    await new Promise((r) => setImmediate(r));
    expect(db.runs).toBe(1); // running, held by the gate
    for (let i = 0; i < 20; i++) db.apply(insert(task({ ownerId: 'a' })));
    db.gate = undefined;
    release();
    await settle(engine);
    expect(db.runs).toBe(2);
    expect(data(a.pushes.at(-1))).toBe(21);
  });

  it('does not push a result identical to the last one', async () => {
    const { db, engine, open } = setup();
    const first = task({ title: 'x' });
    const second = task({ title: 'x' });
    db.apply(insert(first), insert(second));
    const one = open(query('one', TASKS, { title: { eq: 'x' } }));
    const count = open(query('count', TASKS, { title: { eq: 'x' } }));
    // Touches the second row: stream-one still answers the first row, the count stays 2.
    db.apply(update(second, { ...second, priority: 9 }));
    await settle(engine);
    expect(db.runs).toBe(2);
    expect(one.pushes).toEqual([]);
    expect(count.pushes).toEqual([]);
  });

  it('stream-one answers null, then pushes the row when one appears', async () => {
    const { db, engine, open } = setup();
    const a = open(query('one', TASKS, { title: { eq: 'wanted' } }));
    const row = task({ title: 'wanted' });
    db.apply(insert(row));
    await settle(engine);
    expect(a.pushes).toEqual([serializePayload(row)]);
    db.apply(remove(row));
    await settle(engine);
    expect(a.pushes.at(-1)).toBe('{"data":null}');
  });

  it('views re-run on changes to any table they read, except updates to columns they do not read', async () => {
    const { db, engine, open } = setup();
    open(query('list', BOARD, { title: { eq: 'never matched in memory' } }));
    const row = task({ title: 'a' });
    db.apply(insert(row));
    await settle(engine);
    expect(db.runs).toBe(1);
    db.apply(update(row, { ...row, priority: 5 })); // tasks.priority is not in the view
    await settle(engine);
    expect(db.runs).toBe(1);
    db.apply(update(row, { ...row, title: 'b' }));
    await settle(engine);
    expect(db.runs).toBe(2);
    const user = { id: 'us_1', email: 'a@b.c', displayName: null };
    db.apply(insert(user, 'users'));
    await settle(engine);
    expect(db.runs).toBe(3);
    db.apply(update(user, { ...user, displayName: 'n' }, 'users')); // not read by the view
    await settle(engine);
    expect(db.runs).toBe(3);
    db.apply(update(user, { ...user, email: 'z@b.c' }, 'users'));
    await settle(engine);
    expect(db.runs).toBe(4);
  });
});

describe('live engine: joining, caps and leaving', () => {
  it('re-runs a new query once when its table changed between the first read and subscribe', async () => {
    const { db, engine } = setup();
    const q = query('count', TASKS, { ownerId: { eq: 'a' } });
    const since = engine.version;
    const initial = db.answer(q);
    db.apply(insert(task({ ownerId: 'a' }))); // lands after the read, before subscribe
    const pushes: string[] = [];
    engine.subscribe(q, { initial, since, push: (j) => pushes.push(j), fail: () => {} }, 'ip');
    await settle(engine);
    expect(db.runs).toBe(1);
    expect(pushes.map(data)).toEqual([1]);
  });

  it('without `since`, a new query is verified by one run; a current result is not pushed again', async () => {
    const { db, engine } = setup();
    const q = query('count', TASKS, {});
    const pushes: string[] = [];
    engine.subscribe(q, { initial: db.answer(q), push: (j) => pushes.push(j), fail: () => {} }, 'ip');
    await settle(engine);
    expect(db.runs).toBe(1);
    expect(pushes).toEqual([]);
  });

  it('a stream joining a shared query with an older first payload gets the current one', async () => {
    const { engine, open } = setup();
    const q = query('count', TASKS, { ownerId: { eq: 'a' } });
    const a = open(q);
    const pushes: string[] = [];
    engine.subscribe(q, { initial: 7, push: (j) => pushes.push(j), fail: () => {} }, 'ip2');
    await settle(engine);
    expect(pushes.map(data)).toEqual([0]);
    expect(a.pushes).toEqual([]);
  });

  it('caps open streams per IP and server-wide with RATE_LIMITED, and frees slots on unsubscribe', () => {
    const { engine, open } = setup({ maxOpen: 3, maxPerIp: 2 });
    const q = query('count', TASKS, {});
    const a1 = open(q, {}, 'A');
    open(q, {}, 'A');
    expect(() => open(q, {}, 'A')).toThrow(expect.objectContaining({ code: 'RATE_LIMITED', status: 429 }));
    open(q, {}, 'B');
    let err: unknown;
    try {
      open(q, {}, 'C');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('RATE_LIMITED');
    expect((err as ApiError).headers?.['Retry-After']).toBe('1');
    expect(engine.stats().open).toBe(3);
    a1.unsubscribe();
    expect(() => open(q, {}, 'C')).not.toThrow();
  });

  it('unsubscribe releases everything and is idempotent', async () => {
    const { db, engine, open } = setup();
    const clients = [open(query('list', TASKS, { ownerId: { eq: 'a' } })), open(query('count', TASKS, { priority: { gt: 1 } })), open(query('one', BOARD, {}))];
    expect(engine.stats()).toMatchObject({ open: 3, queries: 3 });
    for (const c of clients) {
      c.unsubscribe();
      c.unsubscribe();
    }
    expect(engine.stats()).toEqual({ open: 0, queries: 0, runs: 0, matchEvaluations: 0, pending: 0, memoryBytes: 0 });
    db.apply(insert(task({ ownerId: 'a', priority: 5 })));
    await settle(engine);
    expect(db.runs).toBe(0);
    expect(engine.stats().matchEvaluations).toBe(0);
    // The per-IP count went back to zero too.
    const { engine: capped, open: open2 } = setup({ maxPerIp: 1 });
    open2(query('count', TASKS, {}), {}, 'X').unsubscribe();
    expect(() => open2(query('count', TASKS, {}), {}, 'X')).not.toThrow();
    expect(capped.stats().open).toBe(1);
  });

  it('a failing check calls fail once, unsubscribes, and leaves other streams alone', async () => {
    const { db, engine, open } = setup();
    const q = query('list', TASKS, { ownerId: { eq: 'a' } });
    const denied = new ApiError('FORBIDDEN');
    const strict = open(q, {
      check: async (d) => ((d as { items: { title: string }[] }).items.some((r) => r.title === 'secret') ? denied : null),
    });
    const lax = open(q, { check: async () => null }, '10.0.0.9');
    db.apply(insert(task({ ownerId: 'a', title: 'fine' })));
    await settle(engine);
    expect(strict.pushes).toHaveLength(1);
    db.apply(insert(task({ ownerId: 'a', title: 'secret' })));
    await settle(engine);
    expect(strict.failures).toEqual([denied]);
    expect(strict.pushes).toHaveLength(1);
    expect(lax.pushes).toHaveLength(2);
    expect(engine.stats().open).toBe(1);
  });

  it('checks run on every re-run (token expiry) even when the result did not change', async () => {
    const { db, engine, open } = setup();
    let expired = false;
    const row = task({ ownerId: 'a' });
    db.apply(insert(row));
    const c = open(query('count', TASKS, { ownerId: { eq: 'a' } }), { check: async () => (expired ? new ApiError('INVALID_TOKEN') : null) });
    expired = true;
    db.apply(update(row, { ...row, title: 'still counted once' }));
    await settle(engine);
    expect(c.pushes).toEqual([]);
    expect(c.failures.map((e) => e.code)).toEqual(['INVALID_TOKEN']);
    expect(engine.stats().open).toBe(0);
  });

  it('a check that throws fails the stream with INTERNAL', async () => {
    const { db, engine, open } = setup();
    const c = open(query('count', TASKS, {}), {
      check: async () => {
        throw new Error('boom');
      },
    });
    db.apply(insert(task()));
    await settle(engine);
    expect(c.failures.map((e) => e.code)).toEqual(['INTERNAL']);
    expect(engine.stats().queries).toBe(0);
  });

  it('a failing run fails every stream of that query with a safe INTERNAL and logs once', async () => {
    const log = { error: vi.fn(), warn: vi.fn() };
    const q = query('count', TASKS, {});
    const engine = createLiveEngine({
      run: async (x) => {
        if (x.kind === 'count' && x.plan.where.kind === 'and') throw new Error('disk I/O error at /var/data/db.sqlite');
        return 0;
      },
      log,
    });
    const failures: ApiError[] = [];
    for (const ip of ['1', '2']) engine.subscribe(q, { initial: 0, since: 0, push: () => {}, fail: (e) => failures.push(e) }, ip);
    const other = query('count', TASKS, { ownerId: { eq: 'a' } });
    engine.subscribe(other, { initial: 0, since: 0, push: () => {}, fail: (e) => failures.push(e) }, '3');
    engine.onCommit([insert(task({ ownerId: 'a' }))]);
    await settle(engine);
    expect(failures.map((e) => e.code)).toEqual(['INTERNAL', 'INTERNAL']);
    expect(failures[0]!.message).not.toContain('disk');
    expect(log.error).toHaveBeenCalledTimes(1);
    expect(engine.stats()).toMatchObject({ open: 1, queries: 1 });
  });

  it('a push that throws closes only that stream', async () => {
    const { db, engine, open } = setup();
    const q = query('count', TASKS, {});
    open(q, {
      push: () => {
        throw new Error('socket gone');
      },
    });
    const ok = open(q, {}, 'other');
    db.apply(insert(task()));
    await settle(engine);
    expect(ok.pushes.map(data)).toEqual([1]);
    expect(engine.stats().open).toBe(1);
  });

  it('never calls a subscriber from inside subscribe', () => {
    const { engine } = setup();
    const push = vi.fn();
    const fail = vi.fn();
    engine.subscribe(query('count', TASKS, {}), { initial: 5, push, fail }, 'ip');
    engine.subscribe(query('count', TASKS, {}), { initial: 6, push, fail }, 'ip');
    expect(push).not.toHaveBeenCalled();
    expect(fail).not.toHaveBeenCalled();
  });

  it('close() ends every stream and refuses new ones', async () => {
    const { engine, open } = setup();
    const ended = vi.fn();
    open(query('count', TASKS, {}), { end: ended });
    const plain = open(query('count', USERS, {}));
    engine.close();
    expect(ended).toHaveBeenCalledTimes(1);
    expect(plain.failures.map((e) => e.code)).toEqual(['UNAVAILABLE']);
    expect(engine.stats()).toMatchObject({ open: 0, queries: 0, pending: 0 });
    expect(() => open(query('count', TASKS, {}))).toThrow(expect.objectContaining({ code: 'UNAVAILABLE' }));
  });

  it('onCommit works as a bare listener (the writer calls it unbound)', async () => {
    const { db, engine, open } = setup();
    const c = open(query('count', TASKS, {}));
    const listener = engine.onCommit;
    const row = task();
    db.table('tasks').set(row.id, row);
    listener([insert(row)]);
    await settle(engine);
    expect(c.pushes).toEqual(['{"data":1}']);
  });
});
