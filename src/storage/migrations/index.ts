/**
 * Migrations (issue: "the declared schema is diffed against the last applied one to generate SQL
 * files in the project's migrations/"). The CLI and server start call these:
 * - `tablebase migrate generate` → generateMigration; `apply` → applyMigrations; `status` → migrationStatus
 * - `tablebase serve` → ensureSchema (apply pending files, refuse to start on drift)
 * - `tablebase dev` → autoMigrate (generate if needed, then apply)
 * Destructive changes are refused unless explicitly allowed (`--allow-destructive`).
 */
import type { ProjectModel } from '../../core/model.js';
import type { Dialect } from '../dialect.js';
import type { Driver } from '../driver.js';
import { appliedMigrationsSql, applySession, integrityCheckSql, migrationStatements, migrationsTableSql, recordMigrationSql } from './ddl.js';
import { describeChange, diffSchemas, slugify, slugOf, type Change } from './diff.js';
import { checksumOf, listMigrations, nextMigrationName, readSchemaFile, renderMigration, writeMigration } from './files.js';
import { schemaOf, type SchemaSnapshot } from './snapshot.js';

export type { Change, ColumnField } from './diff.js';
export { describeChange } from './diff.js';
export type { SchemaSnapshot, TableSchema, ColumnSchema, IndexSchema } from './snapshot.js';
export { schemaOf } from './snapshot.js';

export interface GenerateOptions {
  model: ProjectModel;
  dialect: Dialect;
  /** The project's `migrations/` folder. */
  dir: string;
  allowDestructive?: boolean;
  /** Replaces the slug made from the changes (`0003_<name>.sql`). */
  name?: string;
}

export interface GenerateResult {
  /** Path of the written file, or null when the declared schema matches `schema.json`. */
  file: string | null;
  changes: Change[];
  destructive: boolean;
}

export interface MigrationStatus {
  applied: string[];
  pending: string[];
  /** Applied migrations whose file changed since (applying refuses to run until restored). */
  modified: string[];
  /** The declared schema differs from `schema.json`: a generate is needed. */
  drift: boolean;
}

function lastSchema(dir: string, dialect: Dialect): SchemaSnapshot | null {
  const last = readSchemaFile(dir, listMigrations(dir));
  if (last && last.dialect !== dialect.name) {
    throw new Error(`the migrations in ${dir} were generated for ${last.dialect}, not ${dialect.name}`);
  }
  return last;
}

/** Writes the next migration file and `schema.json`; writes nothing when nothing changed. */
export async function generateMigration(options: GenerateOptions): Promise<GenerateResult> {
  const { model, dialect, dir, allowDestructive = false } = options;
  const prev = lastSchema(dir, dialect);
  const next = schemaOf(model, dialect);
  const changes = diffSchemas(prev, next);
  const destructive = changes.some((c) => c.destructive);
  if (changes.length === 0) return { file: null, changes, destructive };
  if (destructive && !allowDestructive) {
    const list = changes.filter((c) => c.destructive).map((c) => `  - ${describeChange(c)}: ${c.reason}`);
    throw new Error(`refusing to generate a destructive migration:\n${list.join('\n')}\nRun again with --allow-destructive to accept these changes.`);
  }
  const now = new Date().toISOString();
  const statements = migrationStatements(changes, { dialect, prev, next, now });
  const slug = (options.name !== undefined && slugify(options.name)) || slugOf(changes, prev === null);
  const name = nextMigrationName(listMigrations(dir), slug);
  const text = renderMigration({ name, dialect: dialect.name, changes, statements, now });
  return { file: writeMigration(dir, name, text, next), changes, destructive };
}

async function appliedRecords(driver: Driver): Promise<Map<string, string>> {
  await driver.run(migrationsTableSql(driver.dialect));
  const rows = await driver.all(appliedMigrationsSql(driver.dialect));
  return new Map(rows.map((r) => [String(r.name), String(r.checksum)]));
}

function tampered(name: string): Error {
  return new Error(`migration ${name}.sql was changed after it was applied (checksum mismatch); restore the file and put new changes in a new migration`);
}

/**
 * Applies the files not yet recorded in `_migrations`, in name order, each in its own
 * transaction together with its record. Answers the names applied.
 */
export async function applyMigrations(options: { driver: Driver; dir: string }): Promise<string[]> {
  const { driver, dir } = options;
  const d = driver.dialect;
  const files = listMigrations(dir);
  const applied = await appliedRecords(driver);
  for (const f of files) {
    const sum = applied.get(f.name);
    if (sum !== undefined && sum !== f.checksum) throw tampered(f.name);
  }
  const done: string[] = [];
  const session = applySession(d);
  for (const f of files) {
    if (applied.has(f.name)) continue;
    // Semicolons on lines of their own: a file whose last line is a comment cannot swallow one.
    // The record goes first: a second server applying the same file at once fails on its key
    // before running any DDL, and finds the migration applied when it looks again.
    const script = [recordMigrationSql(d, f.name, f.checksum, new Date().toISOString()), f.sql, ...integrityCheckSql(d)].join('\n;\n');
    try {
      for (const s of session.before) await driver.run(s);
      await driver.execScript(`${script};`);
    } catch (err) {
      const now = await appliedRecords(driver);
      if (now.get(f.name) === f.checksum) continue;
      throw new Error(`migration ${f.name} failed and was rolled back: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      for (const s of session.after) await driver.run(s);
    }
    done.push(f.name);
  }
  return done;
}

/** What is applied, what is pending, and whether the declared schema needs a new migration. */
export async function migrationStatus(options: { driver: Driver; dir: string; model: ProjectModel }): Promise<MigrationStatus> {
  const { driver, dir, model } = options;
  const files = listMigrations(dir);
  const applied = await appliedRecords(driver);
  const byName = new Map(files.map((f) => [f.name, f]));
  const drift = diffSchemas(lastSchema(dir, driver.dialect), schemaOf(model, driver.dialect)).length > 0;
  return {
    applied: [...applied.keys()],
    pending: files.filter((f) => !applied.has(f.name)).map((f) => f.name),
    modified: [...applied].filter(([name, sum]) => byName.has(name) && byName.get(name)!.checksum !== sum).map(([name]) => name),
    drift,
  };
}

/** `dev`: generate a migration when the declared schema changed, then apply what is pending. */
export async function autoMigrate(options: {
  driver: Driver;
  model: ProjectModel;
  dialect: Dialect;
  dir: string;
  allowDestructive?: boolean;
  /** Slug of a generated file (default from its changes). */
  name?: string;
}): Promise<{ generated: string | null; applied: string[] }> {
  const { file } = await generateMigration(options);
  const applied = await applyMigrations(options);
  return { generated: file, applied };
}

/** `serve`: apply pending files; refuse to start while the declared schema has no migration. */
export async function ensureSchema(options: { driver: Driver; model: ProjectModel; dialect: Dialect; dir: string }): Promise<string[]> {
  const applied = await applyMigrations(options);
  const drift = diffSchemas(lastSchema(options.dir, options.dialect), schemaOf(options.model, options.dialect)).length > 0;
  if (drift) {
    throw new Error('the declared schema has changes without a migration: run `tablebase migrate generate`, review the file, then start again');
  }
  return applied;
}

export { checksumOf };
