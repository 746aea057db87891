/**
 * The auth module's own tables, declared with the definition API so migrations create them like
 * any other table (core/model.ts compileProject(project, internalTables)). They have no rules, so
 * `/db` never serves them (tables start closed; SPEC §5, §13.13).
 *
 * Times are integer epoch milliseconds: compared in SQL (`expires_at > ?`) without parsing, and
 * the same in SQLite and PostgreSQL. Secrets are never stored, only SHA-256 hashes (opaque.ts).
 */
import { column } from '../define/columns.js';
import { table, type Table } from '../define/table.js';

/** One row per sign-in. `expiresAt` slides forward with each refresh-token rotation. */
export const sessionsTable = table('_sessions', {
  prefix: 'ss',
  columns: {
    /** Name of the auth table the user row lives in. */
    authTable: column.text(),
    userId: column.text(),
    createdAt: column.integer(),
    lastUsedAt: column.integer(),
    expiresAt: column.integer(),
    revokedAt: column.integer().nullable(),
    /** `logout`, `reuse`, `reset`, `user` (all sessions of a user revoked). */
    revokeReason: column.text().nullable(),
  },
  indexes: [{ columns: ['authTable', 'userId'] }, { columns: ['revokedAt'] }, { columns: ['expiresAt'] }],
});

/**
 * Every opaque token: refresh tokens (`kind = 'refresh'`, with `sessionId`; rotated ones are kept,
 * marked used, until their session ends, so reuse is recognized), and email-verification and
 * password-reset tokens (`verify`, `reset`; `email` binds the token to the address it was sent to).
 */
export const authTokensTable = table('_auth_tokens', {
  prefix: 'at',
  columns: {
    kind: column.text(),
    tokenHash: column.text().unique(),
    authTable: column.text(),
    userId: column.text(),
    sessionId: column.text().nullable(),
    email: column.text().nullable(),
    createdAt: column.integer(),
    expiresAt: column.integer(),
    usedAt: column.integer().nullable(),
  },
  indexes: [{ columns: ['sessionId'] }, { columns: ['authTable', 'userId', 'kind'] }, { columns: ['expiresAt'] }],
});

/** Pass to `compileProject(project, [...internalTables, ...authInternalTables])`. */
export const authInternalTables: readonly Table<any>[] = Object.freeze([sessionsTable, authTokensTable]);

export const SESSIONS = sessionsTable.name;
export const AUTH_TOKENS = authTokensTable.name;
export const SESSIONS_PREFIX = sessionsTable.options.prefix;
export const TOKENS_PREFIX = authTokensTable.options.prefix;
