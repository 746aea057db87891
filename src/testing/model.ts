/**
 * A small compiled project for unit tests: a table with every filterable column kind, an auth
 * table (with its hidden password column) and a view joining the two, plus read plans built
 * through the real where parser, so tests exercise the same trees the pipeline produces.
 */
import { column, defineProject, table, authTable, view } from '../define/index.js';
import { compileProject, type CollectionModel } from '../core/model.js';
import { parseWhere } from '../pipeline/plan/where.js';
import type { OrderTerm, ReadPlan } from '../storage/plan.js';

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
  return Object.freeze({ collection: c, where: parseWhere(c, where), orderBy: order, limit: opts.limit, offset: opts.offset });
}
