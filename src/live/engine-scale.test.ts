import { describe, expect, it } from 'vitest';
import { createLiveEngine } from './engine.js';
import { FakeDb, settle } from './fake-db.js';
import { insert, query, remove, task, TASKS, update } from './test-fixtures.js';
import type { Row } from '../storage/plan.js';

describe('live engine at scale: work per change does not grow with subscriptions', () => {
  it('one change visits O(1) of 10,000 distinct {ownerId: {eq: X}} streams', async () => {
    const db = new FakeDb();
    const engine = createLiveEngine({ run: db.run, maxOpen: 20_000, maxPerIp: 20_000 });
    db.engine = engine;
    const pushes = new Map<number, string[]>();
    for (let i = 0; i < 10_000; i++) {
      const q = query('list', TASKS, { ownerId: { eq: `u${i}` } });
      const got: string[] = [];
      pushes.set(i, got);
      engine.subscribe(q, { initial: { items: [], total: 0 }, since: engine.version, push: (j) => got.push(j), fail: () => {} }, 'ip');
    }
    expect(engine.stats()).toMatchObject({ open: 10_000, queries: 10_000 });

    const row = task({ ownerId: 'u5000' });
    db.apply(insert(row));
    await settle(engine);
    expect(engine.stats().matchEvaluations).toBe(1);
    expect(db.runs).toBe(1);
    expect([...pushes].filter(([, p]) => p.length > 0).map(([i]) => i)).toEqual([5000]);

    // Moving the row between owners touches exactly the two streams involved.
    db.apply(update(row, { ...row, ownerId: 'u42' }));
    await settle(engine);
    expect(engine.stats().matchEvaluations).toBe(1 + 4);
    expect(db.runs).toBe(3);
    expect(pushes.get(42)).toHaveLength(1);
    expect(pushes.get(5000)).toHaveLength(2);

    // A write no stream watches: no evaluation, no run.
    db.apply(insert(task({ ownerId: 'nobody' })));
    await settle(engine);
    expect(engine.stats().matchEvaluations).toBe(5);
    expect(db.runs).toBe(3);
  });

  it('a write matching 1,000 distinct subscriptions reaches all of them with one run each', async () => {
    const db = new FakeDb();
    const engine = createLiveEngine({ run: db.run, maxPerIp: 5_000 });
    db.engine = engine;
    let delivered = 0;
    for (let i = 0; i < 1_000; i++) {
      const q = query('count', TASKS, { title: { eq: 'hot' }, priority: { gte: -i } });
      engine.subscribe(q, { initial: 0, since: engine.version, push: () => delivered++, fail: () => {} }, 'ip');
    }
    db.apply(insert(task({ title: 'hot', priority: 0 })));
    await settle(engine);
    expect(delivered).toBe(1_000);
    expect(db.runs).toBe(1_000);
  });
});

describe('incremental counts', () => {
  /** A deterministic pseudo-random sequence (no flaky seeds). */
  function lcg(seed: number) {
    let s = seed;
    return () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  }

  it('track the true count through random inserts, updates and deletes without re-running', async () => {
    const db = new FakeDb();
    const engine = createLiveEngine({ run: db.run, incrementalCount: true });
    db.engine = engine;
    const wheres = [{ ownerId: { eq: 'a' } }, { priority: { gt: 2 } }, { ownerId: { eq: 'a' }, isComplete: { eq: true } }, {}];
    const latest = wheres.map(() => ({ value: undefined as number | undefined }));
    wheres.forEach((w, i) => {
      const q = query('count', TASKS, w);
      engine.subscribe(q, { initial: db.answer(q), since: engine.version, push: (j) => (latest[i]!.value = JSON.parse(j).data), fail: () => {} }, 'ip');
    });
    const rand = lcg(7);
    const live: Row[] = [];
    for (let step = 0; step < 300; step++) {
      const r = rand();
      const fields = { ownerId: rand() < 0.5 ? 'a' : 'b', priority: Math.floor(rand() * 5), isComplete: rand() < 0.5 };
      if (r < 0.4 || live.length === 0) {
        const row = task(fields);
        live.push(row);
        db.apply(insert(row));
      } else if (r < 0.75) {
        const i = Math.floor(rand() * live.length);
        const next = { ...live[i]!, ...fields };
        db.apply(update(live[i]!, next));
        live[i] = next;
      } else {
        const [gone] = live.splice(Math.floor(rand() * live.length), 1);
        db.apply(remove(gone!));
      }
      if (step % 37 === 0) await settle(engine);
    }
    await settle(engine);
    expect(db.runs).toBe(0);
    wheres.forEach((w, i) => {
      expect(latest[i]!.value).toBe(db.answer(query('count', TASKS, w)));
    });
  });

  it('fall back to a full run when a change lands while the count is being read', async () => {
    const db = new FakeDb();
    const engine = createLiveEngine({ run: db.run, incrementalCount: true });
    db.engine = engine;
    const q = query('count', TASKS, { ownerId: { eq: 'a' } });
    const got: number[] = [];
    // No `since`: the engine verifies with a run, during which more rows arrive.
    engine.subscribe(q, { initial: 0, push: (j) => got.push(JSON.parse(j).data), fail: () => {} }, 'ip');
    let release!: () => void;
    db.gate = new Promise((r) => (release = r));
    await new Promise((r) => setImmediate(r));
    expect(db.runs).toBe(1);
    db.apply(insert(task({ ownerId: 'a' })), insert(task({ ownerId: 'a' })));
    db.gate = undefined;
    release();
    await settle(engine);
    expect(db.runs).toBe(2);
    expect(got.at(-1)).toBe(2);
    db.apply(insert(task({ ownerId: 'a' })));
    await settle(engine);
    expect(db.runs).toBe(2);
    expect(got.at(-1)).toBe(3);
  });
});
