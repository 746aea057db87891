/** Shared setup for the migration tests: real SQLite files in temp folders. */
import Database from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileProject, type ProjectModel } from '../../core/model.js';
import { column, defineProject, table } from '../../define/index.js';
import type { AnyTable } from '../../define/table.js';
import { sqliteDialect } from '../sqlite/dialect.js';
import { openSqlite, type SqliteDriver } from '../sqlite/driver.js';
import { applyMigrations, generateMigration } from './index.js';

export const dialect = sqliteDialect;
const cleanups: (() => Promise<void> | void)[] = [];

/** Closes the drivers and removes the folders made since the last call (afterEach). */
export async function cleanup(): Promise<void> {
  for (const f of cleanups.splice(0).reverse()) await f();
}

export function setup(): { dir: string; file: string; driver: SqliteDriver } {
  const root = mkdtempSync(join(tmpdir(), 'tb-migrations-'));
  const file = join(root, 'db.sqlite');
  const driver = openSqlite(file);
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  cleanups.push(() => driver.close());
  return { dir: join(root, 'migrations'), file, driver };
}

export const modelOf = (...tables: AnyTable[]): ProjectModel => compileProject(defineProject({ tables }));

/** A fresh read-only connection, so nothing cached by the driver hides what is on disk. */
export function inspect<T>(file: string, fn: (db: Database.Database) => T): T {
  const db = new Database(file, { readonly: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

export const columnsOf = (file: string, t: string) =>
  inspect(file, (db) => db.prepare(`PRAGMA table_info("${t}")`).all() as { name: string; type: string; notnull: number; dflt_value: string | null; pk: number }[]);
export const indexesOf = (file: string, t: string) =>
  inspect(file, (db) => (db.prepare(`PRAGMA index_list("${t}")`).all() as { name: string; unique: number; origin: string }[]).filter((i) => i.origin === 'c'));
export const rowsOf = (file: string, sql: string) => inspect(file, (db) => db.prepare(sql).all() as Record<string, unknown>[]);

export async function migrate(ctx: { dir: string; driver: SqliteDriver }, model: ProjectModel, allowDestructive = false) {
  const generated = await generateMigration({ model, dialect, dir: ctx.dir, allowDestructive });
  const applied = await applyMigrations({ driver: ctx.driver, dir: ctx.dir });
  return { ...generated, applied, sql: generated.file ? readFileSync(generated.file, 'utf8') : '' };
}

export const users = (cols = {}) => table('users', { prefix: 'us', columns: { email: column.email().unique(), name: column.text().nullable(), ...cols } });
export const tasks = (cols = {}) =>
  table('tasks', {
    prefix: 'tk',
    columns: {
      title: column.text(),
      isComplete: column.boolean().default(false),
      priority: column.integer().default(0).index(),
      tags: column.list('text').default([]),
      plan: column.text().default("o'free"),
      ownerId: column.text().nullable().references('users'),
      ...cols,
    },
  });

