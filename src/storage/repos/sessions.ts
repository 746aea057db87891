/**
 * `_sessions` and `_auth_tokens` (auth/schema.ts), statement by statement, for auth/sql-store.ts,
 * which keeps the logic (rotation, reuse detection, purging). Checks that decide a race are single
 * check-and-set statements (`UPDATE … WHERE used_at IS NULL AND expires_at > ?`, then `changes`),
 * so two requests presenting the same token can never both win. See docs/reference/auth.md.
 */
import type { Dialect } from '../dialect.js';
import type { RawRow, SqlRunner } from '../driver.js';
import { as, join, sql, sqlExec, tableRef, type TableDecl } from '../sql.js';

type SessionColumns = 'authTable' | 'userId' | 'createdAt' | 'lastUsedAt' | 'expiresAt' | 'revokedAt' | 'revokeReason';
type TokenColumns = 'kind' | 'tokenHash' | 'authTable' | 'userId' | 'sessionId' | 'email' | 'createdAt' | 'expiresAt' | 'usedAt';

export interface SessionTables {
  readonly sessions: TableDecl<SessionColumns>;
  readonly tokens: TableDecl<TokenColumns>;
}

export interface NewTokenRow {
  id: string;
  kind: string;
  hash: string;
  table: string;
  userId: string;
  sessionId: string | null;
  email: string | null;
  now: number;
  expiresAt: number;
}

export function sessionsRepo(d: Dialect, tables: SessionTables) {
  const x = sqlExec(d);
  const S = tableRef(tables.sessions);
  const T = tableRef(tables.tokens);
  const s = S.as('s');
  const t = T.as('t');
  const sessionSelect = join([
    as(S.c.id, 'id'),
    as(S.c.authTable, 'table'),
    as(S.c.userId, 'userId'),
    as(S.c.createdAt, 'createdAt'),
    as(S.c.lastUsedAt, 'lastUsedAt'),
    as(S.c.expiresAt, 'expiresAt'),
    as(S.c.revokedAt, 'revokedAt'),
    as(S.c.revokeReason, 'revokeReason'),
  ]);
  // Constant fragments are built once: their text is compiled once per dialect (sql.ts).
  const sessionCols = join([S.c.id, S.c.authTable, S.c.userId, S.c.createdAt, S.c.lastUsedAt, S.c.expiresAt]);
  const tokenCols = join([T.c.id, T.c.kind, T.c.tokenHash, T.c.authTable, T.c.userId, T.c.sessionId, T.c.email, T.c.createdAt, T.c.expiresAt]);
  const confirmSelect = join([as(T.c.authTable, 'table'), as(T.c.userId, 'userId'), as(T.c.email, 'email')]);
  // Sessions ended (revoked, or expired unrevoked) before `before`.
  const ended = (before: number) => sql`${S.c.revokedAt} < ${before} OR (${S.c.revokedAt} IS NULL AND ${S.c.expiresAt} < ${before})`;

  return {
    insertSession: (r: SqlRunner, v: { id: string; table: string; userId: string; now: number; expiresAt: number }) =>
      x.run(r, sql`INSERT INTO ${S.table} (${sessionCols}) VALUES (${join([v.id, v.table, v.userId, v.now, v.now, v.expiresAt])})`),
    insertToken: (r: SqlRunner, v: NewTokenRow) =>
      x.run(r, sql`INSERT INTO ${T.table} (${tokenCols}) VALUES (${join([v.id, v.kind, v.hash, v.table, v.userId, v.sessionId, v.email, v.now, v.expiresAt])})`),
    /** A token of `kind` by hash, with its session's owner and revocation. */
    findWithSession: (r: SqlRunner, hash: string, kind: string): Promise<RawRow | undefined> =>
      x.get(
        r,
        sql`SELECT ${join([as(t.c.sessionId, 'sessionId'), as(t.c.usedAt, 'usedAt'), as(t.c.expiresAt, 'expiresAt'), as(s.c.authTable, 'table'), as(s.c.userId, 'userId'), as(s.c.revokedAt, 'revokedAt')])} FROM ${t.table} JOIN ${s.table} ON ${s.c.id} = ${t.c.sessionId} WHERE ${t.c.tokenHash} = ${hash} AND ${t.c.kind} = ${kind}`,
      ),
    /** The check-and-set of a rotation: only an unused, unexpired token of a live session. */
    useSessionToken: (r: SqlRunner, hash: string, kind: string, now: number) =>
      x.run(
        r,
        sql`UPDATE ${T.table} SET ${T.c.usedAt} = ${now} WHERE ${T.c.tokenHash} = ${hash} AND ${T.c.kind} = ${kind} AND ${T.c.usedAt} IS NULL AND ${T.c.expiresAt} > ${now} AND EXISTS (SELECT 1 FROM ${s.table} WHERE ${s.c.id} = ${T.table}.${T.c.sessionId} AND ${s.c.revokedAt} IS NULL)`,
      ),
    slideSession: (r: SqlRunner, id: string, now: number, expiresAt: number) =>
      x.run(r, sql`UPDATE ${S.table} SET ${S.c.lastUsedAt} = ${now}, ${S.c.expiresAt} = ${expiresAt} WHERE ${S.c.id} = ${id}`),
    findSession: (r: SqlRunner, id: string): Promise<RawRow | undefined> => x.get(r, sql`SELECT ${sessionSelect} FROM ${S.table} WHERE ${S.c.id} = ${id}`),
    revokeSession: (r: SqlRunner, id: string, now: number, reason: string) =>
      x.run(r, sql`UPDATE ${S.table} SET ${S.c.revokedAt} = ${now}, ${S.c.revokeReason} = ${reason} WHERE ${S.c.id} = ${id} AND ${S.c.revokedAt} IS NULL`),
    revokeUser: (r: SqlRunner, table: string, userId: string, now: number, reason: string) =>
      x.run(r, sql`UPDATE ${S.table} SET ${S.c.revokedAt} = ${now}, ${S.c.revokeReason} = ${reason} WHERE ${S.c.authTable} = ${table} AND ${S.c.userId} = ${userId} AND ${S.c.revokedAt} IS NULL`),
    /**
     * Read after revokeUser, so no session revoked by it is missed; one revoked at the same moment
     * for the same reason by someone else is listed too, which is right.
     */
    revokedUser: (r: SqlRunner, table: string, userId: string, now: number, reason: string) =>
      x.all(r, sql`SELECT ${as(S.c.id, 'id')} FROM ${S.table} WHERE ${S.c.authTable} = ${table} AND ${S.c.userId} = ${userId} AND ${S.c.revokedAt} = ${now} AND ${S.c.revokeReason} = ${reason}`),
    revokedSince: (r: SqlRunner, since: number) =>
      x.all(r, sql`SELECT ${as(S.c.id, 'sessionId')}, ${as(S.c.revokedAt, 'revokedAt')} FROM ${S.table} WHERE ${S.c.revokedAt} >= ${since} ORDER BY ${S.c.revokedAt}`),
    findConfirm: (r: SqlRunner, hash: string, kind: string): Promise<RawRow | undefined> =>
      x.get(r, sql`SELECT ${confirmSelect} FROM ${T.table} WHERE ${T.c.tokenHash} = ${hash} AND ${T.c.kind} = ${kind}`),
    /** An unused, unexpired token of `kind` (not used up). */
    peekConfirm: (r: SqlRunner, hash: string, kind: string, now: number): Promise<RawRow | undefined> =>
      x.get(r, sql`SELECT ${confirmSelect} FROM ${T.table} WHERE ${T.c.tokenHash} = ${hash} AND ${T.c.kind} = ${kind} AND ${T.c.usedAt} IS NULL AND ${T.c.expiresAt} > ${now}`),
    /** The check-and-set of a confirmation token. */
    useConfirm: (r: SqlRunner, hash: string, kind: string, now: number) =>
      x.run(r, sql`UPDATE ${T.table} SET ${T.c.usedAt} = ${now} WHERE ${T.c.tokenHash} = ${hash} AND ${T.c.kind} = ${kind} AND ${T.c.usedAt} IS NULL AND ${T.c.expiresAt} > ${now}`),
    /** Marks every unused token of `kind` of a user used. */
    retireSiblings: (r: SqlRunner, table: string, userId: string, kind: string, now: number) =>
      x.run(r, sql`UPDATE ${T.table} SET ${T.c.usedAt} = ${now} WHERE ${T.c.authTable} = ${table} AND ${T.c.userId} = ${userId} AND ${T.c.kind} = ${kind} AND ${T.c.usedAt} IS NULL`),
    /** Deletes expired tokens of every kind but `keepKind`. */
    purgeExpiredTokens: (r: SqlRunner, keepKind: string, now: number) => x.run(r, sql`DELETE FROM ${T.table} WHERE ${T.c.kind} <> ${keepKind} AND ${T.c.expiresAt} <= ${now}`),
    /** Deletes the tokens of sessions that ended before `before`. */
    purgeTokensOfEnded: (r: SqlRunner, before: number) => x.run(r, sql`DELETE FROM ${T.table} WHERE ${T.c.sessionId} IN (SELECT ${S.c.id} FROM ${S.table} WHERE ${ended(before)})`),
    purgeEndedSessions: (r: SqlRunner, before: number) => x.run(r, sql`DELETE FROM ${S.table} WHERE ${ended(before)}`),
  };
}

export type SessionsRepo = ReturnType<typeof sessionsRepo>;
