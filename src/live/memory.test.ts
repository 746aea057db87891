import { describe, expect, it, vi } from 'vitest';
import type { ApiError } from '../core/errors.js';
import { createLiveEngine } from './engine.js';
import { FakeDb, settle } from './fake-db.js';
import { fingerprint } from './memory.js';
import { insert, query, task, TASKS } from './test-fixtures.js';

/** A subscriber whose socket never drains: everything pushed stays buffered. */
function stuck(initialTitle: string) {
  const c = { buffered: 0, pushes: 0, failures: [] as ApiError[] };
  return {
    c,
    s: {
      initial: { items: [{ title: initialTitle }], total: 1 },
      push: (json: string) => {
        c.pushes++;
        c.buffered += json.length;
      },
      buffered: () => c.buffered,
      fail: (err: ApiError) => c.failures.push(err),
    },
  };
}

describe('live memory budget (src/live/memory.ts)', () => {
  it('keeps a fingerprint, not a large payload', () => {
    const big = `{"data":"${'x'.repeat(10_000)}"}`;
    expect(fingerprint(big).length).toBeLessThan(50);
    expect(fingerprint('{"data":1}')).toBe('{"data":1}');
    expect(fingerprint(big)).not.toBe(fingerprint(`{"data":"${'y'.repeat(10_000)}"}`));
  });

  it('refuses a subscribe whose first payload would pass the budget: 503 with Retry-After, nothing registered', () => {
    const db = new FakeDb();
    const engine = createLiveEngine({ run: db.run, maxMemoryBytes: 100_000 });
    const first = stuck('a'.repeat(60_000));
    engine.subscribe(query('list', TASKS, { title: { eq: 'a' } }), first.s, '1.1.1.1');
    first.c.buffered = 60_000;
    const second = stuck('b'.repeat(60_000));
    let err: ApiError | undefined;
    try {
      engine.subscribe(query('list', TASKS, { title: { eq: 'b' } }), second.s, '1.1.1.1');
    } catch (e) {
      err = e as ApiError;
    }
    expect(err?.status).toBe(503);
    expect(err?.code).toBe('UNAVAILABLE');
    expect(err?.headers?.['Retry-After']).toBeDefined();
    expect(engine.stats().open).toBe(1);
    // Once the first client has read its payload, the exact count lets the next one in.
    first.c.buffered = 0;
    engine.subscribe(query('list', TASKS, { title: { eq: 'b' } }), second.s, '1.1.1.1');
    expect(engine.stats().open).toBe(2);
  });

  it('a change whose payloads would pass the budget ends the largest streams with a 503 error payload', async () => {
    const db = new FakeDb();
    const log = { error: vi.fn(), warn: vi.fn() };
    const engine = createLiveEngine({ run: db.run, log, maxMemoryBytes: 400_000 });
    db.engine = engine;
    const clients = Array.from({ length: 6 }, (_, i) => {
      const c = stuck('');
      engine.subscribe(query('list', TASKS, { priority: { gte: -i } }), c.s, '1.1.1.1');
      return c.c;
    });
    db.apply(insert(task({ title: 'z'.repeat(100_000), priority: 5 })));
    await settle(engine);
    const ended = clients.filter((c) => c.failures.length > 0);
    expect(ended.length).toBeGreaterThan(0);
    for (const c of ended) expect(c.failures[0]!.code).toBe('UNAVAILABLE');
    expect(clients.filter((c) => c.pushes > 0).length).toBeGreaterThan(0);
    expect(engine.stats().memoryBytes).toBeLessThanOrEqual(400_000);
    expect(log.warn).toHaveBeenCalled();
  });
});
