/**
 * Test support for the auth module's tests: a real SQLite database in a temp folder holding the
 * auth tables (plain DDL mirroring schema.ts; schema.test.ts checks that they agree), the
 * serialized writer in front of it, and a settable clock.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqlite, type SqliteDriver } from '../storage/sqlite/driver.js';
import { WriteQueue } from '../storage/writer.js';
import { RevocationList } from './revocation.js';
import type { WriteFn } from './sessions.js';
import { SqlAuthStore } from './sql-store.js';

export const AUTH_TABLES_DDL = `
CREATE TABLE "_sessions" (
  "id" TEXT NOT NULL PRIMARY KEY,
  "auth_table" TEXT NOT NULL,
  "user_id" TEXT NOT NULL,
  "created_at" INTEGER NOT NULL,
  "last_used_at" INTEGER NOT NULL,
  "expires_at" INTEGER NOT NULL,
  "revoked_at" INTEGER,
  "revoke_reason" TEXT
);
CREATE INDEX "idx__sessions_auth_table_user_id" ON "_sessions" ("auth_table", "user_id");
CREATE INDEX "idx__sessions_revoked_at" ON "_sessions" ("revoked_at");
CREATE TABLE "_auth_tokens" (
  "id" TEXT NOT NULL PRIMARY KEY,
  "kind" TEXT NOT NULL,
  "token_hash" TEXT NOT NULL,
  "auth_table" TEXT NOT NULL,
  "user_id" TEXT NOT NULL,
  "session_id" TEXT,
  "email" TEXT,
  "created_at" INTEGER NOT NULL,
  "expires_at" INTEGER NOT NULL,
  "used_at" INTEGER
);
CREATE UNIQUE INDEX "uq__auth_tokens_token_hash" ON "_auth_tokens" ("token_hash");
CREATE INDEX "idx__auth_tokens_session_id" ON "_auth_tokens" ("session_id");
`;

export class Clock {
  t = Date.UTC(2030, 0, 1);
  readonly now = (): number => this.t;
  advance(ms: number): void {
    this.t += ms;
  }
}

export interface AuthTestDb {
  dir: string;
  file: string;
  driver: SqliteDriver;
  writer: WriteQueue;
  write: WriteFn;
  store: SqlAuthStore;
  clock: Clock;
  close(): Promise<void>;
}

export async function openAuthTestDb(extraDdl = ''): Promise<AuthTestDb> {
  const dir = mkdtempSync(join(tmpdir(), 'tb-auth-'));
  const file = join(dir, 'db.sqlite');
  const driver = openSqlite(file);
  await driver.execScript(AUTH_TABLES_DDL + extraDdl);
  const writer = new WriteQueue(driver);
  return {
    dir,
    file,
    driver,
    writer,
    write: (fn) => writer.submit((tx) => fn(tx)),
    store: new SqlAuthStore(driver.dialect),
    clock: new Clock(),
    close: async () => {
      await writer.whenIdle();
      await driver.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A revocation list on the test clock, for a 1-hour access-token lifetime. */
export function revocationsFor(clock: Clock, accessTtlSeconds = 3600): RevocationList {
  return new RevocationList(accessTtlSeconds, clock.now);
}
