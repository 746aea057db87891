/**
 * Test double for the engine's `run`: an in-memory table store answering live queries with the
 * same where semantics, counting runs. Writes go through `apply`, which mutates the store and
 * then announces the change, like the serialized writer does after COMMIT.
 */
import type { LiveEngine } from './engine.js';
import { matches } from './match.js';
import type { Change } from '../storage/changes.js';
import type { Row } from '../storage/plan.js';
import type { LiveQuery } from './types.js';

export class FakeDb {
  readonly tables = new Map<string, Map<string, Row>>();
  runs = 0;
  /** When set, runs wait for it (to hold a query "running"). */
  gate: Promise<void> | undefined;
  engine: LiveEngine | undefined;

  table(name: string): Map<string, Row> {
    let t = this.tables.get(name);
    if (!t) this.tables.set(name, (t = new Map()));
    return t;
  }

  /** The result the read path would answer right now. */
  answer(q: LiveQuery): unknown {
    const p = q.plan;
    const rows = [...this.table(p.collection.kind === 'view' ? (p.collection.view?.from ?? '') : p.collection.name).values()]
      .filter((r) => matches(p.where, r))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    if (q.kind === 'one') return rows[0] ?? null;
    if (q.kind === 'count') return rows.length;
    const offset = p.offset ?? 0;
    return { items: rows.slice(offset, p.limit === undefined ? undefined : offset + p.limit), total: rows.length };
  }

  run = async (q: LiveQuery): Promise<unknown> => {
    this.runs++;
    if (this.gate) await this.gate;
    return this.answer(q);
  };

  /** Writes then announces, as one committed transaction. */
  apply(...changes: Change[]): void {
    for (const c of changes) {
      const t = this.table(c.table);
      if (c.after) t.set(c.id, c.after);
      else t.delete(c.id);
    }
    this.engine?.onCommit(changes);
  }
}

/** Lets setImmediate flushes and runs finish. */
export async function settle(engine: LiveEngine, max = 100): Promise<void> {
  for (let i = 0; i < max; i++) {
    await new Promise((r) => setImmediate(r));
    if (engine.stats().pending === 0) return;
  }
  throw new Error('the engine did not settle');
}

/** Polls until `ok()` holds; the bound only keeps a broken test from hanging. */
export async function waitFor(ok: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (ok()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
}
