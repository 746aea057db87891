/**
 * Type-level tests for hook contexts typed by their project (issue #10 item 6): hooks and cron
 * declared inside `defineProject` get `HookContext<SchemaOf<tables>>`, so `ctx.get('tasks', …)`
 * answers a task row, and a wrong table, column or value type fails to compile. `npm test` runs
 * `tsc --noEmit` over this file; each `@ts-expect-error` line proves a wrong use is rejected (tsc
 * fails if the line compiles). The runtime part checks how project hooks join the compiled model.
 */
import { describe, expect, it } from 'vitest';
import { authTable, column, defineProject, table, type HookContext, type ProjectSchema, type ServerContext, type UntypedRow } from '../../src/index.js';
import { compileProject } from '../../src/core/model.js';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const assert = <T extends true>(): T => true as T;

const tasks = table('tasks', {
  prefix: 'tk',
  columns: { title: column.text(), done: column.boolean().default(false), ownerId: column.text().references('users').nullable() },
});
const users = authTable('users', { prefix: 'us', columns: { displayName: column.text().nullable() } });

type Task = { id: string; title: string; done: boolean; ownerId: string | null };
type User = { id: string; email: string; isVerified: boolean; createdAt: string; updatedAt: string; displayName: string | null };

const calls: string[] = [];

export const project = defineProject({
  tables: [tasks, users],
  hooks: {
    tasks: {
      beforeCreate: async (ctx, object) => {
        assert<Equal<typeof object, { title: string; done?: boolean; ownerId?: string | null }>>();
        const owner = await ctx.get('users', { id: { eq: object.ownerId ?? '' } });
        assert<Equal<typeof owner, User | null>>();
        void owner;
        const open = await ctx.list('tasks', { where: { done: { eq: false } }, orderBy: [{ column: 'title' }] });
        assert<Equal<typeof open, Task[]>>();
        void open;
        const n: number = await ctx.count('tasks', { title: { startsWith: 'a' } });
        void n;
        ctx.mutate.create('users', { email: 'a@b.c', displayName: null });
        ctx.mutate.update('tasks', { id: { eq: 'tk1' } }, [{ column: 'done', value: true }]);
        // @ts-expect-error no table "task" in this project
        await ctx.get('task', {});
        // @ts-expect-error tasks have no column "titel"
        await ctx.list('tasks', { where: { titel: { eq: 'x' } } });
        // @ts-expect-error done is a boolean
        await ctx.get('tasks', { done: { eq: 'yes' } });
        // @ts-expect-error a task's create object needs a title
        ctx.mutate.create('tasks', { done: true });
        // @ts-expect-error an update names a column and a value of its type
        ctx.mutate.update('tasks', { id: { eq: 'tk1' } }, [{ column: 'done', value: 'no' }]);
        // @ts-expect-error orderBy names a column of the table
        await ctx.list('tasks', { orderBy: [{ column: 'nope' }] });
        calls.push('project beforeCreate');
        return object;
      },
      afterCreateSuccess: (_ctx, row) => {
        assert<Equal<typeof row, Task>>();
        void row;
      },
    },
    users: {
      afterUpdateSuccess: (_ctx, { before, after }) => {
        assert<Equal<typeof before, User>>();
        void before;
        void after.displayName;
      },
    },
  },
  cron: [
    {
      name: 'sweep',
      schedule: '0 * * * *',
      run: async (ctx) => {
        const row = await ctx.db.create('tasks', { title: 'sweep' });
        assert<Equal<typeof row, Task>>();
        void row;
        const gone: number = await ctx.db.delete('tasks', { done: { eq: true } }, { many: true });
        void gone;
        // @ts-expect-error db.create is typed by the table too
        await ctx.db.create('tasks', { title: 1 });
      },
    },
  ],
});

// Never called: only tsc looks at it.
const _misnamed = () =>
  defineProject({
    tables: [tasks],
    hooks: {
      // @ts-expect-error hooks are keyed by the project's table names
      nope: {},
    },
  });
void _misnamed;

// Helpers declared in other files take the project's schema by name.
type Db = ProjectSchema<typeof project>;
export async function ownerOf(ctx: HookContext<Db>, task: Task): Promise<User | null> {
  return task.ownerId === null ? null : ctx.get('users', { id: { eq: task.ownerId } });
}
assert<Equal<Db['tasks']['row'], Task>>();

// A table's own hooks are declared before the project exists: their context stays untyped.
const _untyped = (ctx: HookContext, server: ServerContext) => {
  const r = ctx.get('anything', { whatever: { eq: 1 } });
  assert<Equal<typeof r, Promise<UntypedRow | null>>>();
  void r;
  void server.db.create('anything', { any: 'thing' });
};
void _untyped;

describe('project-level hooks', () => {
  it('join the table hooks in the compiled model', () => {
    const model = compileProject(project);
    const hooks = model.collections.get('tasks')!.hooks!;
    expect(Object.keys(hooks).sort()).toEqual(['afterCreateSuccess', 'beforeCreate']);
    expect(model.collections.get('users')!.hooks!.afterUpdateSuccess).toBeTypeOf('function');
  });

  it('keep the table’s own hooks and refuse one hook declared twice', () => {
    const own = table('notes', { prefix: 'nt', columns: { body: column.text() }, hooks: { afterDeleteSuccess: () => undefined, beforeCreate: (_c, o) => o } });
    const merged = compileProject(defineProject({ tables: [own], hooks: { notes: { afterCreateSuccess: () => undefined } } }));
    expect(Object.keys(merged.collections.get('notes')!.hooks!).sort()).toEqual(['afterCreateSuccess', 'afterDeleteSuccess', 'beforeCreate']);
    expect(() => compileProject(defineProject({ tables: [own], hooks: { notes: { beforeCreate: (_c, o) => o } } }))).toThrow(/hook beforeCreate is declared both on the table and in the project/);
  });

  it('refuse hooks for a table the project lacks', () => {
    const loose = { tables: [tasks], hooks: { ghosts: {} } } as unknown as Parameters<typeof defineProject>[0];
    expect(() => compileProject(defineProject(loose))).toThrow(/hooks name unknown table ghosts/);
  });
});
