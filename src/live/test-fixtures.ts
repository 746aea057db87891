/**
 * Shared fixtures for the live engine's tests: a small compiled project (a table with every
 * filterable column kind, an auth table and a view joining them) and helpers that build plans
 * through the real where parser, so the tests exercise the same trees the pipeline produces.
 */
import { column, defineProject, table, authTable, view } from '../define/index.js';
import { compileProject, type CollectionModel } from '../core/model.js';
import { parseWhere } from '../pipeline/plan/where.js';
import { countPlan, readPlan, type OrderTerm, type ReadPlan, type Row } from '../storage/plan.js';
import type { Change } from '../storage/changes.js';
import type { LiveKind, LiveQuery } from './types.js';

const tasks = table('tasks', {
  prefix: 'tk',
  columns: {
    title: column.text(),
    isComplete: column.boolean().default(false),
    priority: column.integer().default(0),
    score: column.real().default(0),
    ownerId: column.text().nullable(),
    tags: column.list('text').default([]),
    nums: column.list('integer').default([]),
    flags: column.list('boolean').default([]),
    dueAt: column.timestamp().nullable(),
    meta: column.json().nullable(),
    createdAt: column.createdAt(),
  },
});

const users = authTable('users', { prefix: 'us', columns: { displayName: column.text().nullable() } });

const taskBoard = view('task_board', {
  from: tasks,
  joins: [{ table: users, on: [tasks.col('ownerId'), users.col('id')] }],
  select: { id: tasks.col('id'), title: tasks.col('title'), ownerEmail: users.col('email').nullable() },
});

export const model = compileProject(defineProject({ tables: [tasks, users], views: [taskBoard] }));
export const TASKS: CollectionModel = model.collections.get('tasks')!;
export const USERS: CollectionModel = model.collections.get('users')!;
export const BOARD: CollectionModel = model.collections.get('task_board')!;

/** A plan as the pipeline builds it (the real where parser, default order unless given). */
export function plan(c: CollectionModel, where: unknown = {}, opts: { limit?: number; offset?: number; orderBy?: { column: string; direction?: 'asc' | 'desc' }[] } = {}): ReadPlan {
  const order: OrderTerm[] = (opts.orderBy ?? c.defaultOrder).map((o) => ({ column: c.columns.get(o.column)!, direction: o.direction ?? 'asc' }));
  return readPlan(c, parseWhere(c, where), { orderBy: order, limit: opts.limit, offset: opts.offset });
}

export function query(kind: LiveKind, c: CollectionModel, where: unknown = {}, opts: Parameters<typeof plan>[2] = {}): LiveQuery {
  const p = plan(c, where, kind === 'one' ? { ...opts, limit: 1 } : kind === 'count' ? {} : { limit: 100, offset: 0, ...opts });
  return { kind, plan: kind === 'count' ? countPlan(p) : p };
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
