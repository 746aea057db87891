/**
 * The one schema history applied to PostgreSQL (issue #15): each step generates the SQLite and
 * the PostgreSQL file together, and the PostgreSQL one applies in place with rows kept.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { column } from '../../define/index.js';
import type { PostgresDriver } from '../postgres/driver.js';
import { openPostgres } from '../postgres/driver.js';
import { createTestDatabase, type TestDatabase } from '../postgres/test-database.js';
import { applyMigrations, generateMigration, migrationStatus } from './index.js';
import { modelOf, tasks, users } from './test-support.js';

let db: TestDatabase;
let driver: PostgresDriver;
let dir: string;
beforeAll(async () => {
  db = await createTestDatabase();
  driver = await openPostgres(db.url);
  dir = join(mkdtempSync(join(tmpdir(), 'tb-pg-migrations-')), 'migrations');
});
afterAll(async () => {
  await driver?.close();
  await db?.drop();
  rmSync(join(dir, '..'), { recursive: true, force: true });
});

async function step(model: ReturnType<typeof modelOf>, allowDestructive = false) {
  const g = await generateMigration({ model, dir, allowDestructive });
  return { ...g, applied: await applyMigrations({ driver, dir }) };
}
const rows = async (sql: string) => driver.all(sql);

describe('PostgreSQL migrations from the one history', () => {
  it('writes a file per dialect under one name and applies the PostgreSQL one', async () => {
    const r = await step(modelOf(users(), tasks()));
    expect(r.files.map((f) => f.slice(dir.length))).toEqual(['/0001_init.sql', '/postgres/0001_init.sql']);
    expect(r.applied).toEqual(['0001_init']);
    expect(readdirSync(join(dir, 'postgres'))).toEqual(['0001_init.sql']);
    await driver.run(`INSERT INTO users (id, email) VALUES ('us_1', 'a@b.c')`);
    await driver.run(`INSERT INTO tasks (id, title, owner_id) VALUES ('tk_1', 'keep', 'us_1')`);
    expect(await rows('SELECT id, title, is_complete, priority, tags, plan FROM tasks')).toEqual([{ id: 'tk_1', title: 'keep', is_complete: false, priority: 0, tags: [], plan: "o'free" }]);
    expect(await migrationStatus({ driver, dir, model: modelOf(users(), tasks()) })).toEqual({ applied: ['0001_init'], pending: [], modified: [], drift: false });
  });

  it('adds columns in place: nullable, defaulted, createdAt filled with the migration time', async () => {
    const r = await step(modelOf(users(), tasks({ note: column.text().nullable(), rank: column.integer().default(5), createdAt: column.createdAt() })));
    expect(r.applied).toHaveLength(1);
    const [row] = await rows('SELECT note, rank, created_at FROM tasks');
    expect(row).toMatchObject({ note: null, rank: 5, created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });
  });

  it('alters kinds, nullability and defaults in place (widenings keep values)', async () => {
    const model = modelOf(users(), tasks({ note: column.text().default('none'), rank: column.real().default(1.5), createdAt: column.createdAt(), isComplete: column.integer().default(0) }));
    const r = await step(model);
    expect(r.applied).toHaveLength(1);
    expect(await rows('SELECT note, rank, is_complete FROM tasks')).toEqual([{ note: 'none', rank: 5, is_complete: 0 }]);
    await driver.run(`INSERT INTO tasks (id, title, created_at) VALUES ('tk_2', 'new', now())`);
    expect(await rows(`SELECT note, rank FROM tasks WHERE id = 'tk_2'`)).toEqual([{ note: 'none', rank: 1.5 }]);
  });

  it('drops columns with the flag and adds a unique index that applies', async () => {
    await driver.run(`DELETE FROM tasks WHERE id = 'tk_2'`);
    const r = await step(modelOf(users(), tasks({ note: column.text().default('none').unique() })), true);
    expect(r.applied).toHaveLength(1);
    const cols = (await rows(`SELECT column_name FROM information_schema.columns WHERE table_name = 'tasks' ORDER BY column_name`)).map((c) => c.column_name);
    expect(cols).not.toContain('rank');
    await driver.run(`INSERT INTO tasks (id, title, note) VALUES ('tk_3', 'other', 'x')`);
    await expect(driver.run(`UPDATE tasks SET note = 'same'`)).rejects.toMatchObject({ code: '23505' });
  });

  it('rolls back a failing migration and leaves it pending', async () => {
    // A required reference without default on a table with rows: applying fails, nothing changes.
    const model = modelOf(users(), tasks({ note: column.text().default('none').unique(), reviewerId: column.text().references('users') }));
    await generateMigration({ model, dir, allowDestructive: true });
    await expect(applyMigrations({ driver, dir })).rejects.toThrow(/failed and was rolled back/);
    expect((await migrationStatus({ driver, dir, model })).pending).toHaveLength(1);
  });

  it('refuses to apply when the PostgreSQL folder is behind, and writes a baseline for a project that had none', async () => {
    const root = mkdtempSync(join(tmpdir(), 'tb-pg-baseline-'));
    const other = join(root, 'migrations');
    try {
      await generateMigration({ model: modelOf(users()), dir: other });
      rmSync(join(other, 'postgres'), { recursive: true });
      const fresh = await createTestDatabase();
      const d2 = await openPostgres(fresh.url);
      try {
        await expect(applyMigrations({ driver: d2, dir: other })).rejects.toThrow(/postgres migrations .* are behind 0001_init: run `tablebase migrate generate`/);
        const g = await generateMigration({ model: modelOf(users()), dir: other });
        expect(g.file).toBeNull();
        expect(existsSync(join(other, 'postgres', '0001_init.sql'))).toBe(true);
        // Two appliers at once (two nodes starting): the advisory lock makes them take turns.
        const both = await Promise.all([0, 1].map(() => d2.exclusive('tablebase:migrations', () => applyMigrations({ driver: d2, dir: other }))));
        expect(both.flat()).toEqual(['0001_init']);
      } finally {
        await d2.close();
        await fresh.drop();
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
