import { readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { column, table } from '../../define/index.js';
import { applyMigrations, autoMigrate, ensureSchema, generateMigration, migrationStatus } from './index.js';
import { cleanup, columnsOf, dialect, indexesOf, inspect, migrate, modelOf, rowsOf, setup, tasks, users } from './test-support.js';

afterEach(cleanup);

describe('generate and apply: init', () => {
  it('creates tables with their columns, defaults, unique, indexes and references', async () => {
    const ctx = setup();
    const r = await migrate(ctx, modelOf(users(), tasks()));
    expect(r.file).toMatch(/0001_init\.sql$/);
    expect(r.applied).toEqual(['0001_init']);
    expect(readdirSync(ctx.dir).sort()).toEqual(['0001_init.sql', 'postgres', 'schema.json']);
    expect(r.sql).toMatch(/^-- Migration 0001_init/);

    const cols = Object.fromEntries(columnsOf(ctx.file, 'tasks').map((c) => [c.name, c]));
    expect(Object.keys(cols)).toEqual(['id', 'title', 'is_complete', 'priority', 'tags', 'plan', 'owner_id']);
    expect(cols.id).toMatchObject({ type: 'TEXT', pk: 1, notnull: 1 });
    expect(cols.title).toMatchObject({ type: 'TEXT', notnull: 1, dflt_value: null });
    expect(cols.is_complete).toMatchObject({ type: 'INTEGER', notnull: 1, dflt_value: '0' });
    expect(cols.tags!.dflt_value).toBe("'[]'");
    expect(cols.plan!.dflt_value).toBe("'o''free'");
    expect(cols.owner_id).toMatchObject({ notnull: 0 });

    expect(indexesOf(ctx.file, 'users')).toEqual([expect.objectContaining({ name: 'uq_users_email', unique: 1 })]);
    expect(indexesOf(ctx.file, 'tasks').map((i) => i.name).sort()).toEqual(['idx_tasks_owner_id', 'idx_tasks_priority']);
    const fks = inspect(ctx.file, (db) => db.prepare('PRAGMA foreign_key_list("tasks")').all());
    expect(fks).toEqual([expect.objectContaining({ table: 'users', from: 'owner_id', to: 'id', on_delete: 'SET NULL' })]);

    await ctx.driver.run(`INSERT INTO users (id, email) VALUES ('us_1', 'a@b.c')`);
    await ctx.driver.run(`INSERT INTO tasks (id, title, owner_id) VALUES ('tk_1', 'x', 'us_1')`);
    expect(rowsOf(ctx.file, 'SELECT is_complete, priority, tags, plan FROM tasks')).toEqual([{ is_complete: 0, priority: 0, tags: '[]', plan: "o'free" }]);
    await expect(ctx.driver.run(`INSERT INTO users (id, email) VALUES ('us_2', 'a@b.c')`)).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_UNIQUE' });
    // Nullable reference: deleting the referenced row clears it.
    await ctx.driver.run(`DELETE FROM users WHERE id = 'us_1'`);
    expect(rowsOf(ctx.file, 'SELECT owner_id FROM tasks')).toEqual([{ owner_id: null }]);
  });

  it('makes a required reference refuse deletes (NO ACTION, reported as a foreign key error)', async () => {
    const ctx = setup();
    const notes = table('notes', { prefix: 'nt', columns: { userId: column.text().references('users') } });
    await migrate(ctx, modelOf(users(), notes));
    const fks = inspect(ctx.file, (db) => db.prepare('PRAGMA foreign_key_list("notes")').all());
    expect(fks).toEqual([expect.objectContaining({ table: 'users', on_delete: 'NO ACTION' })]);
    await ctx.driver.run(`INSERT INTO users (id, email) VALUES ('us_1', 'a@b.c')`);
    await ctx.driver.run(`INSERT INTO notes (id, user_id) VALUES ('nt_1', 'us_1')`);
    await expect(ctx.driver.run(`DELETE FROM users`)).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_FOREIGNKEY' });
    await expect(ctx.driver.run(`INSERT INTO notes (id, user_id) VALUES ('nt_2', 'nobody')`)).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_FOREIGNKEY' });
  });

  it('generates nothing for an unchanged project', async () => {
    const ctx = setup();
    await migrate(ctx, modelOf(users(), tasks()));
    const again = await migrate(ctx, modelOf(users(), tasks()));
    expect(again).toMatchObject({ file: null, changes: [], destructive: false, applied: [] });
    expect(readdirSync(ctx.dir).sort()).toEqual(['0001_init.sql', 'postgres', 'schema.json']);
  });
});

describe('status', () => {
  it('reports applied, pending and drift', async () => {
    const ctx = setup();
    const model = modelOf(users());
    expect(await migrationStatus({ driver: ctx.driver, dir: ctx.dir, model })).toEqual({ applied: [], pending: [], modified: [], drift: true });
    await generateMigration({ model, dialect, dir: ctx.dir });
    expect(await migrationStatus({ driver: ctx.driver, dir: ctx.dir, model })).toEqual({ applied: [], pending: ['0001_init'], modified: [], drift: false });
    await applyMigrations({ driver: ctx.driver, dir: ctx.dir });
    expect(await migrationStatus({ driver: ctx.driver, dir: ctx.dir, model })).toEqual({ applied: ['0001_init'], pending: [], modified: [], drift: false });
    const changed = modelOf(users({ bio: column.text().nullable() }));
    expect((await migrationStatus({ driver: ctx.driver, dir: ctx.dir, model: changed })).drift).toBe(true);
  });
});

describe('tampering and files', () => {
  it('refuses an applied file whose content changed, but not a line-ending change', async () => {
    const ctx = setup();
    const model = modelOf(users());
    const { file } = await migrate(ctx, model);
    const text = readFileSync(file!, 'utf8');
    writeFileSync(file!, text.replace(/\n/g, '\r\n'));
    expect(await applyMigrations({ driver: ctx.driver, dir: ctx.dir })).toEqual([]);
    writeFileSync(file!, `${text}\nDROP TABLE users;\n`);
    await expect(applyMigrations({ driver: ctx.driver, dir: ctx.dir })).rejects.toThrow(/0001_init\.sql was changed after it was applied/);
    expect((await migrationStatus({ driver: ctx.driver, dir: ctx.dir, model })).modified).toEqual(['0001_init']);
    expect(rowsOf(ctx.file, `SELECT name FROM sqlite_master WHERE name = 'users'`)).toHaveLength(1);
  });

  it('refuses to diff when schema.json is missing beside existing files', async () => {
    const ctx = setup();
    await migrate(ctx, modelOf(users()));
    unlinkSync(join(ctx.dir, 'schema.json'));
    await expect(generateMigration({ model: modelOf(users()), dialect, dir: ctx.dir })).rejects.toThrow(/schema\.json is missing/);
  });

  it('applies a hand-written migration file and uses a given name', async () => {
    const ctx = setup();
    await migrate(ctx, modelOf(users()));
    writeFileSync(join(ctx.dir, '0002_seed.sql'), `INSERT INTO users (id, email) VALUES ('us_1', 'a@b.c');\n-- trailing comment`);
    expect(await applyMigrations({ driver: ctx.driver, dir: ctx.dir })).toEqual(['0002_seed']);
    expect(rowsOf(ctx.file, 'SELECT email FROM users')).toEqual([{ email: 'a@b.c' }]);
    const r = await generateMigration({ model: modelOf(users({ bio: column.text().nullable() })), dialect, dir: ctx.dir, name: 'User Bio!' });
    expect(r.file).toMatch(/0003_user_bio\.sql$/);
  });
});

describe('serve and dev entry points', () => {
  it('ensureSchema refuses drift with one line and applies pending files', async () => {
    const ctx = setup();
    const model = modelOf(users(), tasks());
    const err = await ensureSchema({ driver: ctx.driver, model, dialect, dir: ctx.dir }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/tablebase migrate generate/);
    expect((err as Error).message).not.toContain('\n');
    await generateMigration({ model, dialect, dir: ctx.dir });
    expect(await ensureSchema({ driver: ctx.driver, model, dialect, dir: ctx.dir })).toEqual(['0001_init']);
    expect(await ensureSchema({ driver: ctx.driver, model, dialect, dir: ctx.dir })).toEqual([]);
  });

  it('autoMigrate generates and applies, and still needs the flag for destructive changes', async () => {
    const ctx = setup();
    const opts = { driver: ctx.driver, dialect, dir: ctx.dir, allowDestructive: false };
    const first = await autoMigrate({ ...opts, model: modelOf(users(), tasks()) });
    expect(first).toEqual({ generated: expect.stringMatching(/0001_init\.sql$/), applied: ['0001_init'] });
    expect(await autoMigrate({ ...opts, model: modelOf(users(), tasks()) })).toEqual({ generated: null, applied: [] });
    await expect(autoMigrate({ ...opts, model: modelOf(users()) })).rejects.toThrow(/--allow-destructive/);
    expect((await autoMigrate({ ...opts, model: modelOf(users()), allowDestructive: true })).applied).toEqual(['0002_drop_tasks']);
  });
});
