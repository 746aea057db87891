/**
 * Shared fixtures for the live engine's tests: the unit-test project of src/testing/model.ts
 * (re-exported), live queries over it, task rows and changes.
 */
import type { CollectionModel } from '../core/model.js';
import type { Row } from '../storage/plan.js';
import { plan } from '../testing/model.js';
import type { Change } from '../storage/changes.js';
import type { LiveKind, LiveQuery } from './types.js';

export { BOARD, model, plan, TASKS, USERS } from '../testing/model.js';

export function query(kind: LiveKind, c: CollectionModel, where: unknown = {}, opts: Parameters<typeof plan>[2] = {}): LiveQuery {
  const p = plan(c, where, kind === 'one' ? { ...opts, limit: 1 } : kind === 'count' ? {} : { limit: 100, offset: 0, ...opts });
  return { kind, plan: kind === 'count' ? { ...p, orderBy: [], limit: undefined, offset: undefined } : p };
}

let seq = 0;
/** A task row with defaults for every column. */
export function task(fields: Partial<Row> = {}): Row {
  seq++;
  return {
    id: `tk_${String(seq).padStart(16, '0')}`,
    title: 't',
    isComplete: false,
    priority: 0,
    score: 0,
    ownerId: null,
    tags: [],
    nums: [],
    flags: [],
    dueAt: null,
    meta: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    ...fields,
  };
}

export const insert = (row: Row, t = 'tasks'): Change => ({ table: t, op: 'insert', id: row.id, before: null, after: row });
export const update = (before: Row, after: Row, t = 'tasks'): Change => ({ table: t, op: 'update', id: before.id, before, after });
export const remove = (row: Row, t = 'tasks'): Change => ({ table: t, op: 'delete', id: row.id, before: row, after: null });
