/**
 * AuthStore over SQL. Only parameterized statements; identifiers quoted with `dialect.quote` and
 * placeholders from `dialect.param(n)`, so the same text runs on SQLite and on PostgreSQL.
 * Statements are built once per store. Checks that decide a race are single check-and-set
 * statements (`UPDATE ... WHERE used_at IS NULL AND expires_at > ?`, then `changes`), so two
 * requests presenting the same token can never both win, even outside a transaction.
 */
import { toSnake } from '../core/naming.js';
import type { Dialect } from '../storage/dialect.js';
import type { RawRow, SqlRunner } from '../storage/driver.js';
import type { RevokedSession } from './revocation.js';
import { authTokensTable, sessionsTable } from './schema.js';
import type { AuthStore, ConfirmKind, ConfirmRecord, NewConfirmToken, NewSession, RevokeReason, RotateInput, RotateOutcome, SessionOwner, SessionRecord } from './store.js';

const REFRESH = 'refresh';

/** Quoted SQL names of a table's columns by camelCase name (`id` included). */
function columnsOf(d: Dialect, columns: object): Record<string, string> {
  const out: Record<string, string> = { id: d.quote('id') };
  for (const name of Object.keys(columns)) out[name] = d.quote(toSnake(name));
  return out;
}

/** Builds one statement, numbering its placeholders in order. */
function sql(d: Dialect, build: (p: () => string) => string): string {
  let n = 0;
  return build(() => d.param(++n));
}

/** PostgreSQL answers BIGINT as a string; SQLite as a number. */
const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));
const str = (v: unknown): string => String(v);
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/** Every statement the store runs, built once. */
function statements(d: Dialect) {
  const S = columnsOf(d, sessionsTable.columns);
  const T = columnsOf(d, authTokensTable.columns);
  const ST = d.quote(sessionsTable.name);
  const TT = d.quote(authTokensTable.name);
  const as = (expr: string, alias: string) => `${expr} AS ${d.quote(alias)}`;
  const sessionSelect = [
    as(S.id!, 'id'),
    as(S.authTable!, 'table'),
    as(S.userId!, 'userId'),
    as(S.createdAt!, 'createdAt'),
    as(S.lastUsedAt!, 'lastUsedAt'),
    as(S.expiresAt!, 'expiresAt'),
    as(S.revokedAt!, 'revokedAt'),
    as(S.revokeReason!, 'revokeReason'),
  ].join(', ');
  const insertToken = sql(
    d,
    (p) =>
      `INSERT INTO ${TT} (${T.id}, ${T.kind}, ${T.tokenHash}, ${T.authTable}, ${T.userId}, ${T.sessionId}, ${T.email}, ${T.createdAt}, ${T.expiresAt}) VALUES (${p()}, ${p()}, ${p()}, ${p()}, ${p()}, ${p()}, ${p()}, ${p()}, ${p()})`,
  );
  return Object.freeze({
    insertSession: sql(d, (p) => `INSERT INTO ${ST} (${S.id}, ${S.authTable}, ${S.userId}, ${S.createdAt}, ${S.lastUsedAt}, ${S.expiresAt}) VALUES (${p()}, ${p()}, ${p()}, ${p()}, ${p()}, ${p()})`),
    insertToken,
    findRefresh: sql(
      d,
      (p) =>
        `SELECT ${as(`t.${T.sessionId}`, 'sessionId')}, ${as(`t.${T.usedAt}`, 'usedAt')}, ${as(`t.${T.expiresAt}`, 'expiresAt')}, ${as(`s.${S.authTable}`, 'table')}, ${as(`s.${S.userId}`, 'userId')}, ${as(`s.${S.revokedAt}`, 'revokedAt')} ` +
        `FROM ${TT} t JOIN ${ST} s ON s.${S.id} = t.${T.sessionId} WHERE t.${T.tokenHash} = ${p()} AND t.${T.kind} = ${p()}`,
    ),
    // The check-and-set of a rotation: only an unused, unexpired token of a live session.
    useRefresh: sql(
      d,
      (p) =>
        `UPDATE ${TT} SET ${T.usedAt} = ${p()} WHERE ${T.tokenHash} = ${p()} AND ${T.kind} = ${p()} AND ${T.usedAt} IS NULL AND ${T.expiresAt} > ${p()} ` +
        `AND EXISTS (SELECT 1 FROM ${ST} s WHERE s.${S.id} = ${TT}.${T.sessionId} AND s.${S.revokedAt} IS NULL)`,
    ),
    slideSession: sql(d, (p) => `UPDATE ${ST} SET ${S.lastUsedAt} = ${p()}, ${S.expiresAt} = ${p()} WHERE ${S.id} = ${p()}`),
    findSession: sql(d, (p) => `SELECT ${sessionSelect} FROM ${ST} WHERE ${S.id} = ${p()}`),
    revokeSession: sql(d, (p) => `UPDATE ${ST} SET ${S.revokedAt} = ${p()}, ${S.revokeReason} = ${p()} WHERE ${S.id} = ${p()} AND ${S.revokedAt} IS NULL`),
    revokeUser: sql(d, (p) => `UPDATE ${ST} SET ${S.revokedAt} = ${p()}, ${S.revokeReason} = ${p()} WHERE ${S.authTable} = ${p()} AND ${S.userId} = ${p()} AND ${S.revokedAt} IS NULL`),
    // Read after the update, so no session revoked by it is missed; one revoked at the same
    // moment for the same reason by someone else is revoked too, so listing it is right.
    revokedUser: sql(d, (p) => `SELECT ${as(S.id!, 'id')} FROM ${ST} WHERE ${S.authTable} = ${p()} AND ${S.userId} = ${p()} AND ${S.revokedAt} = ${p()} AND ${S.revokeReason} = ${p()}`),
    revokedSince: sql(d, (p) => `SELECT ${as(S.id!, 'sessionId')}, ${as(S.revokedAt!, 'revokedAt')} FROM ${ST} WHERE ${S.revokedAt} >= ${p()} ORDER BY ${S.revokedAt}`),
    findConfirm: sql(d, (p) => `SELECT ${as(T.authTable!, 'table')}, ${as(T.userId!, 'userId')}, ${as(T.email!, 'email')} FROM ${TT} WHERE ${T.tokenHash} = ${p()} AND ${T.kind} = ${p()}`),
    peekConfirm: sql(
      d,
      (p) =>
        `SELECT ${as(T.authTable!, 'table')}, ${as(T.userId!, 'userId')}, ${as(T.email!, 'email')} FROM ${TT} WHERE ${T.tokenHash} = ${p()} AND ${T.kind} = ${p()} AND ${T.usedAt} IS NULL AND ${T.expiresAt} > ${p()}`,
    ),
    useConfirm: sql(d, (p) => `UPDATE ${TT} SET ${T.usedAt} = ${p()} WHERE ${T.tokenHash} = ${p()} AND ${T.kind} = ${p()} AND ${T.usedAt} IS NULL AND ${T.expiresAt} > ${p()}`),
    retireSiblings: sql(d, (p) => `UPDATE ${TT} SET ${T.usedAt} = ${p()} WHERE ${T.authTable} = ${p()} AND ${T.userId} = ${p()} AND ${T.kind} = ${p()} AND ${T.usedAt} IS NULL`),
    purgeConfirm: sql(d, (p) => `DELETE FROM ${TT} WHERE ${T.kind} <> ${p()} AND ${T.expiresAt} <= ${p()}`),
    purgeRefresh: sql(d, (p) => `DELETE FROM ${TT} WHERE ${T.sessionId} IN (SELECT ${S.id} FROM ${ST} WHERE ${S.revokedAt} < ${p()} OR (${S.revokedAt} IS NULL AND ${S.expiresAt} < ${p()}))`),
    purgeSessions: sql(d, (p) => `DELETE FROM ${ST} WHERE ${S.revokedAt} < ${p()} OR (${S.revokedAt} IS NULL AND ${S.expiresAt} < ${p()})`),
  });
}

export class SqlAuthStore implements AuthStore {
  readonly #q: ReturnType<typeof statements>;

  constructor(dialect: Dialect) {
    this.#q = statements(dialect);
  }

  async createSession(r: SqlRunner, s: NewSession): Promise<void> {
    await r.run(this.#q.insertSession, [s.id, s.table, s.userId, s.now, s.now, s.expiresAt]);
    await r.run(this.#q.insertToken, [s.refreshTokenId, REFRESH, s.refreshHash, s.table, s.userId, s.id, null, s.now, s.expiresAt]);
  }

  async rotateRefreshToken(r: SqlRunner, input: RotateInput): Promise<RotateOutcome> {
    const row = await r.get(this.#q.findRefresh, [input.hash, REFRESH]);
    if (row === undefined) return { kind: 'invalid' };
    const sessionId = str(row.sessionId);
    if (row.revokedAt !== null && row.revokedAt !== undefined) return { kind: 'invalid' };
    if (row.usedAt !== null && row.usedAt !== undefined) return this.#reused(r, sessionId, input.now);
    if (num(row.expiresAt) <= input.now) return { kind: 'invalid' };
    const won = await r.run(this.#q.useRefresh, [input.now, input.hash, REFRESH, input.now]);
    if (won.changes !== 1) {
      // Lost a race: someone used or revoked it between the read and the update.
      const again = await r.get(this.#q.findRefresh, [input.hash, REFRESH]);
      if (again && (again.revokedAt === null || again.revokedAt === undefined) && again.usedAt !== null && again.usedAt !== undefined) {
        return this.#reused(r, sessionId, input.now);
      }
      return { kind: 'invalid' };
    }
    const owner = { table: str(row.table), userId: str(row.userId) };
    await r.run(this.#q.insertToken, [input.newTokenId, REFRESH, input.newHash, owner.table, owner.userId, sessionId, null, input.now, input.expiresAt]);
    await r.run(this.#q.slideSession, [input.now, input.expiresAt, sessionId]);
    return { kind: 'rotated', session: { id: sessionId, ...owner } };
  }

  async #reused(r: SqlRunner, sessionId: string, now: number): Promise<RotateOutcome> {
    await this.revokeSession(r, sessionId, now, 'reuse');
    return { kind: 'reused', sessionId };
  }

  async findSession(r: SqlRunner, sessionId: string): Promise<SessionRecord | null> {
    const row = await r.get(this.#q.findSession, [sessionId]);
    return row === undefined ? null : toSession(row);
  }

  async revokeSession(r: SqlRunner, sessionId: string, now: number, reason: RevokeReason): Promise<boolean> {
    return (await r.run(this.#q.revokeSession, [now, reason, sessionId])).changes > 0;
  }

  async revokeAllForUser(r: SqlRunner, owner: SessionOwner, now: number, reason: RevokeReason): Promise<string[]> {
    const { changes } = await r.run(this.#q.revokeUser, [now, reason, owner.table, owner.userId]);
    if (changes === 0) return [];
    const rows = await r.all(this.#q.revokedUser, [owner.table, owner.userId, now, reason]);
    return rows.map((row) => str(row.id));
  }

  async revokedSince(r: SqlRunner, sinceMs: number): Promise<RevokedSession[]> {
    const rows = await r.all(this.#q.revokedSince, [sinceMs]);
    return rows.map((row) => ({
      sessionId: str(row.sessionId),
      revokedAt: num(row.revokedAt),
    }));
  }

  async createConfirmToken(r: SqlRunner, t: NewConfirmToken): Promise<void> {
    await r.run(this.#q.insertToken, [t.id, t.kind, t.hash, t.table, t.userId, null, t.email, t.now, t.expiresAt]);
  }

  async consumeConfirmToken(r: SqlRunner, kind: ConfirmKind, hash: string, now: number): Promise<ConfirmRecord | null> {
    const row = await r.get(this.#q.findConfirm, [hash, kind]);
    if (row === undefined) return null;
    const won = await r.run(this.#q.useConfirm, [now, hash, kind, now]);
    if (won.changes !== 1) return null;
    const record: ConfirmRecord = {
      table: str(row.table),
      userId: str(row.userId),
      email: strOrNull(row.email),
    };
    // An older reset link must not work after a newer one was used (and vice versa).
    await r.run(this.#q.retireSiblings, [now, record.table, record.userId, kind]);
    return record;
  }

  async peekConfirmToken(r: SqlRunner, kind: ConfirmKind, hash: string, now: number): Promise<ConfirmRecord | null> {
    const row = await r.get(this.#q.peekConfirm, [hash, kind, now]);
    return row === undefined ? null : { table: str(row.table), userId: str(row.userId), email: strOrNull(row.email) };
  }

  async purgeExpired(r: SqlRunner, now: number, revokedBefore: number): Promise<number> {
    let n = (await r.run(this.#q.purgeConfirm, [REFRESH, now])).changes;
    n += (await r.run(this.#q.purgeRefresh, [revokedBefore, revokedBefore])).changes;
    n += (await r.run(this.#q.purgeSessions, [revokedBefore, revokedBefore])).changes;
    return n;
  }
}

function toSession(row: RawRow): SessionRecord {
  return {
    id: str(row.id),
    table: str(row.table),
    userId: str(row.userId),
    createdAt: num(row.createdAt),
    lastUsedAt: num(row.lastUsedAt),
    expiresAt: num(row.expiresAt),
    revokedAt: numOrNull(row.revokedAt),
    revokeReason: strOrNull(row.revokeReason),
  };
}
