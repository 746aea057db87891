import { describe, expect, it } from 'vitest';
import type { LiveEngine, LiveQuery, Subscriber } from '../live/index.js';
import { liveCensus } from './live-census.js';

function fakeEngine(cap: number): LiveEngine & { released: number } {
  let open = 0;
  const e = {
    released: 0,
    subscribe: () => {
      if (open >= cap) throw new Error('over the cap');
      open++;
      return () => {
        open--;
        e.released++;
      };
    },
    admit: () => () => {},
    onCommit: () => {},
    invalidate: () => {},
    version: 0,
    stats: () => ({ open, queries: 1, runs: 0, matchEvaluations: 0, pending: 0, memoryBytes: 0 }),
    close: () => {},
  };
  return e;
}

const q = (kind: LiveQuery['kind'], table: string) => ({ kind, plan: { collection: { name: table } } }) as unknown as LiveQuery;
const sub = {} as Subscriber;

describe('liveCensus', () => {
  it('counts open streams by route and table until each unsubscribes (once)', () => {
    const inner = fakeEngine(10);
    const c = liveCensus(inner);
    const a = c.engine.subscribe(q('list', 'tasks'), sub, 'ip');
    const b = c.engine.subscribe(q('list', 'tasks'), sub, 'ip');
    c.engine.subscribe(q('count', 'notes'), sub, 'ip');
    expect(c.streams()).toEqual([
      { route: 'GET /db/stream/list', table: 'tasks', open: 2 },
      { route: 'GET /db/stream/count', table: 'notes', open: 1 },
    ]);
    a();
    a();
    b();
    expect(c.streams()).toEqual([{ route: 'GET /db/stream/count', table: 'notes', open: 1 }]);
    expect(inner.released).toBe(3); // the engine's unsubscribe is idempotent itself; we pass every call on
  });

  it('counts nothing when the engine refuses a stream', () => {
    const c = liveCensus(fakeEngine(0));
    expect(() => c.engine.subscribe(q('one', 'tasks'), sub, 'ip')).toThrow();
    expect(c.streams()).toEqual([]);
  });
});
