/**
 * One schema history, SQL for every database (issue #15): `schema.json` records the history in
 * SQLite's terms (the first dialect), and `migrate generate` writes each migration once per
 * dialect: `migrations/NNNN_x.sql` for SQLite, `migrations/postgres/NNNN_x.sql` for PostgreSQL,
 * under the same name, so both databases record the same history in `_migrations`.
 */
import { join } from 'node:path';
import type { Dialect } from '../dialect.js';
import { postgresDialect } from '../postgres/dialect.js';
import { sqliteDialect } from '../sqlite/dialect.js';

/** The dialect whose column types `schema.json` records. */
export const HISTORY_DIALECT: Dialect = sqliteDialect;

export const DIALECTS: readonly Dialect[] = [sqliteDialect, postgresDialect];

/** Where `d`'s files live inside a project's `migrations/` folder. */
export function dirFor(dir: string, d: Dialect | Dialect['name']): string {
  const name = typeof d === 'string' ? d : d.name;
  return name === HISTORY_DIALECT.name ? dir : join(dir, name);
}
