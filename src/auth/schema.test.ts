import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileProject } from '../core/model.js';
import { defineProject } from '../define/project.js';
import { migrationStatements } from '../storage/migrations/ddl.js';
import { diffSchemas } from '../storage/migrations/diff.js';
import { schemaOf } from '../storage/migrations/snapshot.js';
import { openSqlite } from '../storage/sqlite/driver.js';
import { sqliteDialect } from '../storage/sqlite/dialect.js';
import { authInternalTables } from './schema.js';
import { SessionManager } from './sessions.js';
import { SqlAuthStore } from './sql-store.js';
import { AUTH_TABLES_DDL, Clock, revocationsFor } from './test-fixtures.js';

const model = compileProject(defineProject({ tables: [] }), authInternalTables);
const snapshot = schemaOf(model, sqliteDialect);

describe('auth internal tables', () => {
  it('compile as closed internal tables with snake_case columns', () => {
    const sessions = model.collections.get('_sessions')!;
    const tokens = model.collections.get('_auth_tokens')!;
    expect(sessions.internal && tokens.internal).toBe(true);
    expect(sessions.rules).toBeUndefined();
    expect(tokens.columnList.map((c) => c.sql)).toEqual(['id', 'kind', 'token_hash', 'auth_table', 'user_id', 'session_id', 'email', 'created_at', 'expires_at', 'used_at']);
  });

  it('the test DDL has exactly the declared columns, types and nullability', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tb-auth-schema-'));
    const driver = openSqlite(join(dir, 'db.sqlite'));
    try {
      await driver.execScript(AUTH_TABLES_DDL);
      for (const t of snapshot.tables) {
        const info = await driver.all(`SELECT name, type, "notnull" AS nn FROM pragma_table_info(?) ORDER BY cid`, [t.name]);
        expect(info).toEqual(t.columns.map((c) => ({ name: c.name, type: c.type, nn: c.nullable ? 0 : 1 })));
      }
    } finally {
      await driver.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the tables that migrations generate serve the SQL store', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tb-auth-migrate-'));
    const driver = openSqlite(join(dir, 'db.sqlite'));
    try {
      const sql = migrationStatements(diffSchemas(null, snapshot), { dialect: sqliteDialect, prev: null, next: snapshot, now: new Date().toISOString() });
      await driver.execScript(sql.join(';\n'));
      const clock = new Clock();
      const sessions = new SessionManager({
        store: new SqlAuthStore(sqliteDialect),
        reader: driver,
        write: (fn) => driver.transaction(fn),
        revocations: revocationsFor(clock),
        refreshTokenTtlSeconds: 3600,
        now: clock.now,
      });
      const s = await sessions.start({ table: 'users', userId: 'us_1' });
      const r = await sessions.refresh(s.refreshToken);
      expect(r.sessionId).toBe(s.sessionId);
      await expect(sessions.refresh(s.refreshToken)).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
      expect((await sessions.find(s.sessionId))?.revokeReason).toBe('reuse');
    } finally {
      await driver.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
