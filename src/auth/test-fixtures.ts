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
CREATE TABLE "_oauth_identities" (
  "id" TEXT NOT NULL PRIMARY KEY,
  "provider" TEXT NOT NULL,
  "subject" TEXT NOT NULL,
  "auth_table" TEXT NOT NULL,
  "user_id" TEXT NOT NULL,
  "email" TEXT,
  "created_at" INTEGER NOT NULL
);
CREATE INDEX "idx__oauth_identities_auth_table_user_id" ON "_oauth_identities" ("auth_table", "user_id");
CREATE UNIQUE INDEX "uq__oauth_identities_auth_table_provider_subject" ON "_oauth_identities" ("auth_table", "provider", "subject");
CREATE TABLE "_oauth_states" (
  "id" TEXT NOT NULL PRIMARY KEY,
  "state_hash" TEXT NOT NULL,
  "provider" TEXT NOT NULL,
  "auth_table" TEXT NOT NULL,
  "code_verifier" TEXT NOT NULL,
  "nonce" TEXT,
  "redirect_uri" TEXT NOT NULL,
  "redirect_to" TEXT NOT NULL,
  "created_at" INTEGER NOT NULL,
  "expires_at" INTEGER NOT NULL,
  "used_at" INTEGER
);
CREATE INDEX "idx__oauth_states_expires_at" ON "_oauth_states" ("expires_at");
CREATE UNIQUE INDEX "uq__oauth_states_state_hash" ON "_oauth_states" ("state_hash");
CREATE TABLE "_otp_codes" (
  "id" TEXT NOT NULL PRIMARY KEY,
  "auth_table" TEXT NOT NULL,
  "email" TEXT NOT NULL,
  "code_hash" TEXT NOT NULL,
  "attempts" INTEGER NOT NULL,
  "created_at" INTEGER NOT NULL,
  "expires_at" INTEGER NOT NULL,
  "used_at" INTEGER
);
CREATE INDEX "idx__otp_codes_expires_at" ON "_otp_codes" ("expires_at");
CREATE UNIQUE INDEX "uq__otp_codes_auth_table_email" ON "_otp_codes" ("auth_table", "email");
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
