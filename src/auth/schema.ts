/**
 * The auth module's own tables, declared with the definition API so migrations create them like
 * any other table (core/model.ts compileProject(project, internalTables)). They have no rules, so
 * `/db` never serves them (tables start closed; docs/reference/rules-and-hooks.md, docs/reference/dashboard.md).
 *
 * Times are integer epoch milliseconds: compared in SQL (`expires_at > ?`) without parsing, and
 * the same in SQLite and PostgreSQL. Secrets are never stored, only SHA-256 hashes (opaque.ts).
 */
import { column } from '../define/columns.js';
import { table, type AnyTable } from '../define/table.js';

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
 * password-reset tokens (`verify`, `reset`), magic links (`magic`) and email changes (`changeEmail`,
 * whose `email` is the new address); `email` binds the token to the address it was sent to).
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

/**
 * One-time sign-in codes (docs/reference/auth.md): one live code per (auth table, email) — a new send replaces
 * the old row — kept as an HMAC (a 6-digit code has too little entropy for a plain hash), with
 * the count of wrong tries. `userId` is null for an address that will sign up on verify.
 */
export const otpCodesTable = table('_otp_codes', {
  prefix: 'oc',
  columns: {
    authTable: column.text(),
    email: column.text(),
    codeHash: column.text(),
    attempts: column.integer(),
    createdAt: column.integer(),
    expiresAt: column.integer(),
    usedAt: column.integer().nullable(),
  },
  indexes: [{ columns: ['authTable', 'email'], unique: true }, { columns: ['expiresAt'] }],
});

/**
 * Pending OAuth sign-ins (docs/reference/auth.md): `state` (as a hash), the PKCE verifier, the OIDC nonce and
 * where to send the browser back. Single-use, 10 minutes. Kept in the database rather than in
 * memory so the callback may reach another node than the start.
 */
export const oauthStatesTable = table('_oauth_states', {
  prefix: 'os',
  columns: {
    stateHash: column.text().unique(),
    provider: column.text(),
    authTable: column.text(),
    codeVerifier: column.text(),
    nonce: column.text().nullable(),
    redirectUri: column.text(),
    redirectTo: column.text(),
    createdAt: column.integer(),
    expiresAt: column.integer(),
    usedAt: column.integer().nullable(),
  },
  indexes: [{ columns: ['expiresAt'] }],
});

/** Which provider account is which user: (provider, subject) → (auth table, user). */
export const oauthIdentitiesTable = table('_oauth_identities', {
  prefix: 'oi',
  columns: {
    provider: column.text(),
    subject: column.text(),
    authTable: column.text(),
    userId: column.text(),
    /** The email the provider reported at link time (information only). */
    email: column.text().nullable(),
    createdAt: column.integer(),
  },
  indexes: [{ columns: ['authTable', 'provider', 'subject'], unique: true }, { columns: ['authTable', 'userId'] }],
});

/** Pass to `compileProject(project, [...internalTables, ...authInternalTables])`. */
export const authInternalTables: readonly AnyTable[] = Object.freeze([sessionsTable, authTokensTable, otpCodesTable, oauthStatesTable, oauthIdentitiesTable]);

export const SESSIONS = sessionsTable.name;
export const AUTH_TOKENS = authTokensTable.name;
export const SESSIONS_PREFIX = sessionsTable.options.prefix;
export const TOKENS_PREFIX = authTokensTable.options.prefix;
