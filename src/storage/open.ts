/**
 * Which database a server, a migration or an admin command opens (docs/reference/configuration.md): PostgreSQL when a
 * `postgres://` URL is given (`--database` or `DATABASE_URL`), else the SQLite file in the data
 * folder.
 */
import { join } from 'node:path';
import type { Driver } from './driver.js';
import { openSqlite } from './sqlite/driver.js';

export interface DatabaseConfig {
  readonly dataDir: string;
  readonly synchronous: 'normal' | 'full';
  readonly databaseUrl: string | undefined;
}

export async function openDatabase(config: DatabaseConfig): Promise<Driver> {
  // pg is loaded only when PostgreSQL is used (issue #25: a SQLite start skips it).
  if (config.databaseUrl) return (await import('./postgres/driver.js')).openPostgres(checkDatabaseUrl(config.databaseUrl));
  return openSqlite(join(config.dataDir, 'db.sqlite'), { synchronous: config.synchronous });
}

/** A database URL this server can use, or a one-line reason why not. */
export function checkDatabaseUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`--database: not a URL (expected postgres://user@host:5432/name)`);
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') throw new Error(`--database: only postgres:// URLs are supported, not ${u.protocol}//`);
  if (!u.hostname || u.pathname.length <= 1) throw new Error('--database: the URL needs a host and a database name (postgres://user@host:5432/name)');
  return url;
}
