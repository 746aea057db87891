/**
 * The live memory budget is never passed at any point a reader can see it (`stats().memoryBytes`,
 * what /dashboard/live shows), with an asynchronous database: re-runs that do not fit, results
 * that grow, first reads in flight, sockets holding more than they were checked for. CI caught a
 * worker's count past its share in test/security/live-memory.test.ts on PostgreSQL: a re-run
 * started with nothing else in flight reserved twice its payload whether it fitted or not.
 */
import { describe, expect, it } from 'vitest';
import type { ApiError } from '../core/errors.js';
import { createLiveEngine, type LiveEngine } from './engine.js';
import { FakeDb, settle } from './fake-db.js';
import { query, task, TASKS, update } from './test-fixtures.js';
import type { LiveQuery, Subscriber } from './types.js';

/** Records the engine's count wherever a reader could look: reads, checks, pushes, every tick. */
function watch(engine: () => LiveEngine) {
  const seen: number[] = [];
  const look = () => void seen.push(engine().stats().memoryBytes);
  return { seen, look, max: () => Math.max(0, ...seen) };
}

/** A stream whose client never reads: everything written stays buffered, plus `extra` bytes. */
function stuck(look: () => void, initial: unknown) {
  const c = { buffered: JSON.stringify({ data: initial }).length, extra: 0, pushes: [] as string[], failures: [] as ApiError[] };
  const s: Subscriber = {
    initial,
    push: (json) => {
      c.pushes.push(json);
      c.buffered += json.length;
      look();
    },
    buffered: () => c.buffered + c.extra,
    fail: (err) => void c.failures.push(err),
    check: async () => {
      look();
      return null;
    },
  };
  return { c, s };
}

function setup(max: number) {
  const db = new FakeDb();
  const w = watch(() => engine); // called only once the engine exists
  const run = db.run;
  db.run = async (q: LiveQuery) => {
    w.look(); // the run's reservation is made before it reads
    const data = await run(q);
    await new Promise((r) => setImmediate(r)); // a real driver answers in a later tick
    return data;
  };
  const engine = createLiveEngine({ run: db.run, maxMemoryBytes: max });
  db.engine = engine;
  const open = (priority: number) => {
    const q = query('list', TASKS, { priority: { eq: priority } });
    const client = stuck(w.look, db.answer(q));
    engine.subscribe(q, { ...client.s, since: engine.version }, '1.1.1.1');
    w.look();
    return client.c;
  };
  const rows = [1, 2, 3].map((p) => task({ priority: p, title: String(p).repeat(60_000) }));
  for (const r of rows) db.table('tasks').set(r.id, r);
  return { db, engine: () => engine, w, open, rows };
}

const ended = (c: { failures: ApiError[] }) => c.failures.length === 1 && c.failures[0]!.code === 'UNAVAILABLE';

describe('live memory budget, never passed (src/live/engine.ts)', () => {
  it('a re-run that does not fit with nothing in flight ends the largest streams before it starts', async () => {
    const { db, engine, w, open, rows } = setup(200_000);
    const clients = [1, 2, 3].map(open); // ~64 KB each, never read: ~192 KB of 200 KB
    db.apply(update(rows[0]!, { ...rows[0]!, title: 'x'.repeat(60_000) })); // its re-run holds ~120 KB
    await settle(engine());
    w.look();
    expect(w.max()).toBeLessThanOrEqual(200_000);
    // No stream is left silently stale: the changed one got the new rows or a 503 error payload.
    const changed = clients[0]!;
    expect(changed.pushes.some((p) => p.includes('xxxx')) || ended(changed)).toBe(true);
    expect(clients.filter(ended).length).toBeGreaterThan(0);
  });

  it('a result larger than its reservation makes room before it is counted', async () => {
    const { db, engine, w, open, rows } = setup(300_000);
    db.table('tasks').set(rows[0]!.id, { ...rows[0]!, title: 'a' }); // the first payload is small
    const small = open(1);
    open(2);
    open(3); // ~130 KB + a small one
    db.apply(update({ ...rows[0]!, title: 'a' }, { ...rows[0]!, title: 'y'.repeat(100_000) })); // holds ~200 KB once read
    await settle(engine());
    w.look();
    expect(w.max()).toBeLessThanOrEqual(300_000);
    expect(small.pushes.some((p) => p.includes('yyyy')) || ended(small)).toBe(true);
  });

  it('a re-run waits for a first read in flight (new ones are refused meanwhile), then runs within the budget', async () => {
    const { db, engine, w, open, rows } = setup(300_000);
    const clients = [1, 2].map(open); // ~128 KB
    // Expected as large as the largest payload over the table: holds ~124 KB until the read is over.
    const release = engine().admit(query('list', TASKS, { priority: { eq: 9 } }));
    w.look();
    db.apply(update(rows[0]!, { ...rows[0]!, title: 'x'.repeat(60_000) })); // ~120 KB more: does not fit
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(db.runs).toBe(0); // waiting for the read in flight, not over the budget
    expect(() => engine().admit(query('list', TASKS, { priority: { eq: 8 } }))).toThrow(/too much live-query data/);
    release();
    await settle(engine());
    w.look();
    expect(db.runs).toBe(1);
    expect(w.max()).toBeLessThanOrEqual(300_000);
    expect(clients[0]!.pushes.some((p) => p.includes('xxxx')) || ended(clients[0]!)).toBe(true);
  });

  it('a socket found holding more than it was checked for (framing, UTF-8, heartbeats) never leaves the count past the budget', () => {
    const { engine, w, open } = setup(140_000);
    const [a] = [1, 2].map(open); // ~128 KB of 140 KB
    a!.extra = 20_000; // what its socket really holds beyond the payloads' length
    const late = stuck(w.look, { items: [], total: 0, pad: 'p'.repeat(10_000) });
    try {
      engine().subscribe(query('list', TASKS, { priority: { eq: 7 } }), late.s, '1.1.1.1'); // forces the exact count
    } catch {
      // refused or admitted: either way the count must stay within the budget
    }
    w.look();
    expect(w.max()).toBeLessThanOrEqual(140_000);
    expect(ended(a!)).toBe(true);
  });
});
