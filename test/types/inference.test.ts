/**
 * Type-level tests: a table declared once types its rows in rules, hooks and handlers. `npm test`
 * runs `tsc --noEmit` over this file, so a regression in inference fails CI; the runtime part
 * only keeps vitest from reporting an empty file.
 */
import { describe, expect, it } from 'vitest';
import { column, table, view, type RowOf } from '../../src/index.js';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const assert = <T extends true>(): T => true as T;

const tasks = table('tasks', {
  prefix: 'tk',
  columns: {
    title: column.text(),
    done: column.boolean().default(false),
    priority: column.integer().nullable(),
    tags: column.list('text').default([]),
    meta: column.json<{ color: string }>().nullable(),
    doneAt: column.updatedWhen('done'),
    createdAt: column.createdAt(),
  },
  rowRules: {
    canView: (_jwt, row) => {
      assert<Equal<typeof row.title, string>>();
      assert<Equal<typeof row.priority, number | null>>();
      assert<Equal<typeof row.tags, string[]>>();
      // @ts-expect-error no such column
      void row.nope;
      return row.done;
    },
  },
  hooks: {
    beforeCreate: (_ctx, object) => {
      assert<Equal<typeof object.title, string>>();
      // createdAt is server-managed: not part of the create object
      // @ts-expect-error createdAt cannot be created
      void object.createdAt;
      return { ...object, title: object.title.trim() };
    },
    afterUpdateSuccess: (_ctx, change) => {
      const { before, after } = change;
      void [before, after];
      assert<Equal<typeof before.done, boolean>>();
      assert<Equal<typeof after.meta, { color: string } | null>>();
    },
  },
  operations: {
    complete: async (_ctx, req) => {
      void req;
      assert<Equal<typeof req.many, boolean>>();
      return null;
    },
  },
});

type Task = RowOf<typeof tasks.columns>;
assert<Equal<Task['id'], string>>();
assert<Equal<Task['doneAt'], string | null>>();
assert<Equal<(typeof tasks)['$create'], { title: string; done?: boolean; priority?: number | null; tags?: string[]; meta?: { color: string } | null }>>();

export const board = view('board', {
  from: tasks,
  select: { id: tasks.col('id'), title: tasks.col('title'), priority: tasks.col('priority') },
});
assert<Equal<(typeof board)['$row'], { id: string; title: string; priority: number | null }>>();

// Never called: only tsc looks at it.
const _typeOnly = () =>
  // @ts-expect-error a view cannot select a column its source lacks
  tasks.col('missing');
void _typeOnly;

describe('type inference', () => {
  it('is checked by tsc (npm test runs tsc --noEmit first)', () => {
    expect(tasks.name).toBe('tasks');
  });
});
