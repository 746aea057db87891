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
import { DIALECTS, dirFor, HISTORY_DIALECT } from './dialects.js';
import { describeChange, diffSchemas, slugify, slugOf, type Change } from './diff.js';
import { checksumOf, listMigrations, nextMigrationName, readSchemaFile, renderMigration, writeMigration, writeMigrationFile } from './files.js';
import { schemaOf, type SchemaSnapshot } from './snapshot.js';

export type { Change, ColumnField } from './diff.js';
export { describeChange } from './diff.js';
export type { SchemaSnapshot, TableSchema, ColumnSchema, IndexSchema } from './snapshot.js';
export { schemaOf } from './snapshot.js';

export interface GenerateOptions {
  model: ProjectModel;
  /** Accepted for compatibility: every dialect's file is written (migrations/dialects.ts). */
  dialect?: Dialect;
  /** The project's `migrations/` folder. */
  dir: string;
  allowDestructive?: boolean;
  /** Replaces the slug made from the changes (`0003_<name>.sql`). */
  name?: string;
  /**
   * Leaves the generation time out of the files (and fills new createdAt columns with the epoch),
   * so every node generating the server's own migrations writes the same bytes (same checksum).
   */
  reproducible?: boolean;
}

export interface GenerateResult {
  /** Path of the written SQLite file, or null when the declared schema matches `schema.json`. */
  file: string | null;
  /** Every file written: one per dialect, plus any baseline of a dialect that had none. */
  files: string[];
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

function lastSchema(dir: string): SchemaSnapshot | null {
  const last = readSchemaFile(dir, listMigrations(dir));
  if (last && last.dialect !== HISTORY_DIALECT.name) {
    throw new Error(`the schema history in ${dir} is recorded for ${last.dialect}, not ${HISTORY_DIALECT.name}`);
  }
  return last;
}

const declared = (model: ProjectModel) => schemaOf(model, HISTORY_DIALECT);

/**
 * A dialect added to a project that already has migrations starts from a baseline: one file
 * creating the schema as `schema.json` describes it, named like the newest migration (so it
 * stands for all of them and the numbering stays shared).
 */
function writeBaselines(dir: string, prev: SchemaSnapshot | null, now: string): string[] {
  const main = listMigrations(dir);
  if (!prev || main.length === 0) return [];
  const written: string[] = [];
  for (const d of DIALECTS) {
    const own = dirFor(dir, d);
    if (own === dir || listMigrations(own).length > 0) continue;
    const name = main[main.length - 1]!.name;
    const changes = diffSchemas(null, prev);
    const statements = migrationStatements(changes, { dialect: d, prev: null, next: prev, now });
    written.push(writeMigrationFile(own, name, renderMigration({ name, dialect: d.name, changes, statements, now })));
  }
  return written;
}

/** Writes the next migration (one file per dialect) and `schema.json`; writes nothing when nothing changed. */
export async function generateMigration(options: GenerateOptions): Promise<GenerateResult> {
  const { model, dir, allowDestructive = false } = options;
  const prev = lastSchema(dir);
  const next = declared(model);
  const changes = diffSchemas(prev, next);
  const destructive = changes.some((c) => c.destructive);
  if (destructive && !allowDestructive) {
    const list = changes.filter((c) => c.destructive).map((c) => `  - ${describeChange(c)}: ${c.reason}`);
    throw new Error(`refusing to generate a destructive migration:\n${list.join('\n')}\nRun again with --allow-destructive to accept these changes.`);
  }
  const now = options.reproducible ? new Date(0).toISOString() : new Date().toISOString();
  const stamp = options.reproducible ? undefined : now;
  const files = writeBaselines(dir, prev, now);
  if (changes.length === 0) return { file: null, files, changes, destructive };
  const slug = (options.name !== undefined && slugify(options.name)) || slugOf(changes, prev === null);
  const name = nextMigrationName(listMigrations(dir), slug);
  let file: string | null = null;
  for (const d of DIALECTS) {
    const statements = migrationStatements(changes, { dialect: d, prev, next, now });
    const text = renderMigration({ name, dialect: d.name, changes, statements, now: stamp });
    if (d === HISTORY_DIALECT) files.push((file = writeMigration(dir, name, text, next)));
    else files.push(writeMigrationFile(dirFor(dir, d), name, text));
  }
  return { file, files, changes, destructive };
}

/** The files `driver` applies; refuses when its dialect's folder is behind the history. */
function filesFor(driver: Driver, dir: string) {
  const files = listMigrations(dirFor(dir, driver.dialect));
  if (dirFor(dir, driver.dialect) !== dir) {
    const main = listMigrations(dir);
    const last = (list: typeof main) => list[list.length - 1]?.name ?? '';
    if (last(main) > last(files)) {
      throw new Error(`the ${driver.dialect.name} migrations in ${dirFor(dir, driver.dialect)} are behind ${last(main)}: run \`tablebase migrate generate\``);
    }
  }
  return files;
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
  const files = filesFor(driver, dir);
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
  const files = listMigrations(dirFor(dir, driver.dialect));
  const applied = await appliedRecords(driver);
  const byName = new Map(files.map((f) => [f.name, f]));
  const drift = diffSchemas(lastSchema(dir), declared(model)).length > 0;
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
  dialect?: Dialect;
  dir: string;
  allowDestructive?: boolean;
  /** Slug of a generated file (default from its changes). */
  name?: string;
  reproducible?: boolean;
}): Promise<{ generated: string | null; applied: string[] }> {
  const { file } = await generateMigration(options);
  const applied = await applyMigrations(options);
  return { generated: file, applied };
}

/** `serve`: apply pending files; refuse to start while the declared schema has no migration. */
export async function ensureSchema(options: { driver: Driver; model: ProjectModel; dialect?: Dialect; dir: string }): Promise<string[]> {
  const applied = await applyMigrations(options);
  const drift = diffSchemas(lastSchema(options.dir), declared(options.model)).length > 0;
  if (drift) {
    throw new Error('the declared schema has changes without a migration: run `tablebase migrate generate`, review the file, then start again');
  }
  return applied;
}

export { checksumOf };
