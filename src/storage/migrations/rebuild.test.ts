import { readdirSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { column, table } from '../../define/index.js';
import { applyMigrations, generateMigration, migrationStatus } from './index.js';
import { cleanup, columnsOf, dialect, indexesOf, inspect, migrate, modelOf, rowsOf, setup, tasks, users } from './test-support.js';

afterEach(cleanup);

describe('column changes', () => {
  it('adds a nullable column with ALTER TABLE ADD COLUMN', async () => {
    const ctx = setup();
    await migrate(ctx, modelOf(users(), tasks()));
    await ctx.driver.run(`INSERT INTO tasks (id, title) VALUES ('tk_1', 'keep')`);
    const r = await migrate(ctx, modelOf(users(), tasks({ note: column.text().nullable() })));
    expect(r.file).toMatch(/0002_add_tasks_note\.sql$/);
    expect(r.sql).toContain('ALTER TABLE "tasks" ADD COLUMN "note" TEXT;');
    expect(r.sql).not.toContain('_tb_new_');
    expect(rowsOf(ctx.file, 'SELECT id, title, note FROM tasks')).toEqual([{ id: 'tk_1', title: 'keep', note: null }]);
  });

  it('adds a required column with a default, filling existing rows', async () => {
    const ctx = setup();
    await migrate(ctx, modelOf(users(), tasks()));
    await ctx.driver.run(`INSERT INTO tasks (id, title) VALUES ('tk_1', 'keep')`);
    const r = await migrate(ctx, modelOf(users(), tasks({ rank: column.integer().default(5), done: column.boolean().default(true) })));
    expect(r.destructive).toBe(false);
    expect(r.sql).toContain('ALTER TABLE "tasks" ADD COLUMN "rank" INTEGER NOT NULL DEFAULT 5;');
    expect(rowsOf(ctx.file, 'SELECT rank, done FROM tasks')).toEqual([{ rank: 5, done: 1 }]);
  });

  it('fills an added createdAt with the migration time', async () => {
    const ctx = setup();
    await migrate(ctx, modelOf(users(), tasks()));
    await ctx.driver.run(`INSERT INTO tasks (id, title) VALUES ('tk_1', 'keep')`);
    const r = await migrate(ctx, modelOf(users(), tasks({ createdAt: column.createdAt() })));
    expect(r.destructive).toBe(false);
    const [row] = rowsOf(ctx.file, 'SELECT title, created_at FROM tasks');
    expect(row).toMatchObject({ title: 'keep', created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });
    expect(columnsOf(ctx.file, 'tasks').find((c) => c.name === 'created_at')).toMatchObject({ notnull: 1 });
  });

  it('refuses to drop a column without the flag and keeps other data with it', async () => {
    const ctx = setup();
    await migrate(ctx, modelOf(users(), tasks({ score: column.real().default(0) })));
    await ctx.driver.run(`INSERT INTO tasks (id, title, priority, score) VALUES ('tk_1', 'keep', 7, 1.5)`);
    await expect(generateMigration({ model: modelOf(users(), tasks()), dialect, dir: ctx.dir })).rejects.toThrow(
      /destructive[\s\S]*drop column tasks\.score: its values are lost[\s\S]*--allow-destructive/,
    );
    expect(readdirSync(ctx.dir).sort()).toEqual(['0001_init.sql', 'postgres', 'schema.json']);
    const r = await migrate(ctx, modelOf(users(), tasks()), true);
    expect(r).toMatchObject({ destructive: true, applied: ['0002_drop_tasks_score'] });
    expect(r.sql).toContain('[DESTRUCTIVE: its values are lost]');
    expect(columnsOf(ctx.file, 'tasks').map((c) => c.name)).not.toContain('score');
    expect(rowsOf(ctx.file, 'SELECT id, title, priority FROM tasks')).toEqual([{ id: 'tk_1', title: 'keep', priority: 7 }]);
  });

  it('rebuilds a table to drop a referencing column, preserving rows and indexes', async () => {
    const ctx = setup();
    await migrate(ctx, modelOf(users(), tasks({ note: column.text().nullable() })));
    await ctx.driver.run(`INSERT INTO users (id, email) VALUES ('us_1', 'a@b.c')`);
    await ctx.driver.run(`INSERT INTO tasks (id, title, priority, tags, owner_id, note) VALUES ('tk_1', 'keep', 3, '["a"]', 'us_1', NULL)`);
    const next = table('tasks', {
      prefix: 'tk',
      columns: {
        title: column.text(),
        isComplete: column.boolean().default(false),
        priority: column.integer().default(0).index(),
        tags: column.list('text').default([]),
        plan: column.text().default("o'free"),
        note: column.text().default('none'),
      },
    });
    const r = await migrate(ctx, modelOf(users(), next), true);
    expect(r.sql).toContain('CREATE TABLE "_tb_new_tasks"');
    expect(r.sql).toContain('COALESCE("note", \'none\')');
    expect(rowsOf(ctx.file, 'SELECT id, title, priority, tags, plan, note FROM tasks')).toEqual([
      { id: 'tk_1', title: 'keep', priority: 3, tags: '["a"]', plan: "o'free", note: 'none' },
    ]);
    expect(indexesOf(ctx.file, 'tasks').map((i) => i.name)).toEqual(['idx_tasks_priority']);
    expect(columnsOf(ctx.file, 'tasks').find((c) => c.name === 'note')).toMatchObject({ notnull: 1, dflt_value: "'none'" });
    expect(rowsOf(ctx.file, `SELECT name FROM sqlite_master WHERE name LIKE '_tb_%'`)).toEqual([]);
  });

  it('adds .unique() and enforces it', async () => {
    const ctx = setup();
    await migrate(ctx, modelOf(users(), tasks()));
    await ctx.driver.run(`INSERT INTO tasks (id, title) VALUES ('tk_1', 'same')`);
    const r = await migrate(ctx, modelOf(users(), tasks({ title: column.text().unique() })));
    expect(r.sql).toContain('CREATE UNIQUE INDEX "uq_tasks_title" ON "tasks" ("title");');
    expect(indexesOf(ctx.file, 'tasks').find((i) => i.name === 'uq_tasks_title')).toMatchObject({ unique: 1 });
    await expect(ctx.driver.run(`INSERT INTO tasks (id, title) VALUES ('tk_2', 'same')`)).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_UNIQUE' });
  });

  it('rolls back a migration that fails on existing data and leaves it pending', async () => {
    const ctx = setup();
    await migrate(ctx, modelOf(users(), tasks()));
    await ctx.driver.run(`INSERT INTO tasks (id, title) VALUES ('tk_1', 'dup'), ('tk_2', 'dup')`);
    const model = modelOf(users(), tasks({ title: column.text().unique(), extra: column.text().nullable() }));
    await generateMigration({ model, dialect, dir: ctx.dir });
    await expect(applyMigrations({ driver: ctx.driver, dir: ctx.dir })).rejects.toThrow(/migration 0002_add_tasks_extra_and_add_uq_tasks_title failed and was rolled back: UNIQUE/);
    expect(columnsOf(ctx.file, 'tasks').map((c) => c.name)).not.toContain('extra');
    expect(await migrationStatus({ driver: ctx.driver, dir: ctx.dir, model })).toMatchObject({ applied: ['0001_init'], pending: ['0002_add_tasks_extra_and_add_uq_tasks_title'] });
    // Foreign keys are back on after the failed attempt.
    await expect(ctx.driver.run(`INSERT INTO tasks (id, title, owner_id) VALUES ('tk_3', 'x', 'nobody')`)).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_FOREIGNKEY' });
  });

  it('writes a comment-only migration for a kind change over the same stored type', async () => {
    const ctx = setup();
    await migrate(ctx, modelOf(table('people', { prefix: 'pp', columns: { contact: column.email() } })));
    const r = await migrate(ctx, modelOf(table('people', { prefix: 'pp', columns: { contact: column.text() } })));
    expect(r).toMatchObject({ destructive: false, applied: ['0002_alter_people_contact'] });
    expect(r.sql).toContain('-- Nothing to run');
    expect((await migrate(ctx, modelOf(table('people', { prefix: 'pp', columns: { contact: column.text() } })))).file).toBeNull();
  });

  it('refuses to drop a table without the flag', async () => {
    const ctx = setup();
    await migrate(ctx, modelOf(users(), tasks()));
    await expect(generateMigration({ model: modelOf(users()), dialect, dir: ctx.dir })).rejects.toThrow(/drop table tasks: its rows are lost/);
    const r = await migrate(ctx, modelOf(users()), true);
    expect(r.applied).toEqual(['0002_drop_tasks']);
    expect(rowsOf(ctx.file, `SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'tasks'`)).toEqual([]);
  });
});

describe('foreign keys through rebuilds', () => {
  const comments = () => table('comments', { prefix: 'cm', columns: { taskId: column.text().references('tasks'), body: column.text() } });

  it('keeps references intact when referenced tables are rebuilt', async () => {
    const ctx = setup();
    await migrate(ctx, modelOf(users(), tasks(), comments()));
    await ctx.driver.run(`INSERT INTO users (id, email) VALUES ('us_1', 'a@b.c')`);
    await ctx.driver.run(`INSERT INTO tasks (id, title, owner_id) VALUES ('tk_1', 't', 'us_1')`);
    await ctx.driver.run(`INSERT INTO comments (id, task_id, body) VALUES ('cm_1', 'tk_1', 'hi')`);
    // users.name becomes required with a default; tasks.title gets a default: both rebuilt.
    const r = await migrate(ctx, modelOf(users({ name: column.text().default('anon') }), tasks({ title: column.text().default('untitled') }), comments()));
    expect(r.sql).toContain('CREATE TABLE "_tb_new_users"');
    expect(r.sql).toContain('CREATE TABLE "_tb_new_tasks"');
    expect(inspect(ctx.file, (db) => db.prepare('PRAGMA foreign_key_check').all())).toEqual([]);
    // The SET NULL reference was not cleared by dropping the old users table.
    expect(rowsOf(ctx.file, 'SELECT owner_id FROM tasks')).toEqual([{ owner_id: 'us_1' }]);
    expect(rowsOf(ctx.file, 'SELECT task_id, body FROM comments')).toEqual([{ task_id: 'tk_1', body: 'hi' }]);
    expect(rowsOf(ctx.file, 'SELECT name FROM users')).toEqual([{ name: 'anon' }]);
    const childSql = rowsOf(ctx.file, `SELECT sql FROM sqlite_master WHERE name = 'comments'`)[0]!.sql as string;
    expect(childSql).toContain('REFERENCES "tasks"');
    expect(indexesOf(ctx.file, 'tasks').map((i) => i.name).sort()).toEqual(['idx_tasks_owner_id', 'idx_tasks_priority']);
    // Enforcement is back on for the server.
    await expect(ctx.driver.run(`INSERT INTO comments (id, task_id, body) VALUES ('cm_2', 'nope', 'x')`)).rejects.toMatchObject({
      code: 'SQLITE_CONSTRAINT_FOREIGNKEY',
    });
    await expect(ctx.driver.run(`DELETE FROM tasks WHERE id = 'tk_1'`)).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_FOREIGNKEY' });
  });

  it('rebuilds a self-referencing table and drops a referenced table with its references', async () => {
    const ctx = setup();
    const nodes = (cols = {}) =>
      table('nodes', { prefix: 'nd', columns: { parentId: column.text().nullable().references('nodes'), label: column.text().nullable(), ...cols } });
    await migrate(ctx, modelOf(users(), tasks(), nodes()));
    await ctx.driver.run(`INSERT INTO users (id, email) VALUES ('us_1', 'a@b.c')`);
    await ctx.driver.run(`INSERT INTO tasks (id, title, owner_id) VALUES ('tk_1', 't', 'us_1')`);
    await ctx.driver.run(`INSERT INTO nodes (id, parent_id, label) VALUES ('nd_1', NULL, NULL), ('nd_2', 'nd_1', 'b')`);
    const tasksWithoutOwner = table('tasks', { prefix: 'tk', columns: { title: column.text() } });
    const r = await migrate(ctx, modelOf(tasksWithoutOwner, nodes({ label: column.text().default('?') })), true);
    expect(r.file).toMatch(/0002_drop_users_and_drop_tasks_is_complete_and_more\.sql$/);
    expect(r.sql).toContain('CREATE TABLE "_tb_new_nodes"');
    expect(r.sql).toContain('CREATE TABLE "_tb_new_tasks"');
    expect(rowsOf(ctx.file, 'SELECT id, parent_id, label FROM nodes ORDER BY id')).toEqual([
      { id: 'nd_1', parent_id: null, label: '?' },
      { id: 'nd_2', parent_id: 'nd_1', label: 'b' },
    ]);
    expect(rowsOf(ctx.file, 'SELECT * FROM tasks')).toEqual([{ id: 'tk_1', title: 't' }]);
    expect(rowsOf(ctx.file, `SELECT name FROM sqlite_master WHERE name = 'users'`)).toEqual([]);
    expect(inspect(ctx.file, (db) => db.prepare('PRAGMA foreign_key_list("nodes")').all())).toEqual([expect.objectContaining({ table: 'nodes' })]);
    await expect(ctx.driver.run(`INSERT INTO nodes (id, parent_id, label) VALUES ('nd_3', 'nope', 'x')`)).rejects.toMatchObject({
      code: 'SQLITE_CONSTRAINT_FOREIGNKEY',
    });
  });

  it('aborts a migration that would leave dangling references', async () => {
    const ctx = setup();
    await migrate(ctx, modelOf(users(), tasks({ editorId: column.text().nullable() })));
    await ctx.driver.run(`INSERT INTO tasks (id, title, editor_id) VALUES ('tk_1', 't', 'us_missing')`);
    const model = modelOf(users(), tasks({ editorId: column.text().nullable().references('users') }));
    await generateMigration({ model, dialect, dir: ctx.dir });
    await expect(applyMigrations({ driver: ctx.driver, dir: ctx.dir })).rejects.toThrow(/references to rows that do not exist/);
    expect(inspect(ctx.file, (db) => db.prepare('PRAGMA foreign_key_list("tasks")').all())).toHaveLength(1);
    expect((await migrationStatus({ driver: ctx.driver, dir: ctx.dir, model })).pending).toHaveLength(1);
  });
});

