/**
 * Open streams by route and table for the dashboard's Live screen (docs/reference/dashboard.md Live), stream routes
 * and /db/live subscriptions each under their own route name. Wraps the live engine's
 * `subscribe` and counts until each stream's unsubscribe; the engine itself keeps only totals.
 */
import type { LiveEngine } from '../live/index.js';

const ROUTE = { one: 'GET /db/stream', list: 'GET /db/stream/list', count: 'GET /db/stream/count' } as const;
/** A /db/live subscription is named by the route its subscribe message gives (docs/reference/live.md). */
const SOCKET = { one: 'WS /db/live get', list: 'WS /db/live list', count: 'WS /db/live count' } as const;

export interface StreamCount {
  readonly route: string;
  readonly table: string;
  readonly open: number;
}

export interface LiveCensus {
  readonly engine: LiveEngine;
  streams(): StreamCount[];
}

/**
 * `others`: the figures of the other processes of this server (the workers, as the primary last
 * gathered them), added to this engine's in `stats()` and `streams()`.
 */
export function liveCensus(inner: LiveEngine, others?: () => readonly { open: number; queries: number; memoryBytes?: number; streams: readonly StreamCount[] }[]): LiveCensus {
  const open = new Map<string, number>();
  const engine: LiveEngine = {
    subscribe(q, subscriber, ip) {
      const unsubscribe = inner.subscribe(q, subscriber, ip); // throws over the caps: nothing counted
      const key = `${(subscriber.via === 'socket' ? SOCKET : ROUTE)[q.kind]}\u0000${q.plan.collection.name}`;
      open.set(key, (open.get(key) ?? 0) + 1);
      let done = false;
      return () => {
        if (!done) {
          done = true;
          const n = (open.get(key) ?? 1) - 1;
          if (n > 0) open.set(key, n);
          else open.delete(key);
        }
        unsubscribe();
      };
    },
    admit: (q) => inner.admit(q),
    onCommit: (changes) => inner.onCommit(changes),
    invalidate: (tables) => inner.invalidate(tables),
    get version() {
      return inner.version;
    },
    stats: () => {
      const s = inner.stats();
      if (!others) return s;
      const o = others();
      return {
        ...s,
        open: o.reduce((n, f) => n + f.open, s.open),
        queries: o.reduce((n, f) => n + f.queries, s.queries),
        // Each worker holds a share of the one budget (server/worker.ts): the server's use is the sum.
        memoryBytes: o.reduce((n, f) => n + (f.memoryBytes ?? 0), s.memoryBytes),
      };
    },
    close: () => inner.close(),
  };
  return {
    engine,
    streams: () => {
      const all = new Map(open);
      for (const f of others?.() ?? []) for (const s of f.streams) all.set(`${s.route}\u0000${s.table}`, (all.get(`${s.route}\u0000${s.table}`) ?? 0) + s.open);
      return [...all].map(([key, n]) => {
        const [route, table] = key.split('\u0000') as [string, string];
        return { route, table, open: n };
      });
    },
  };
}
