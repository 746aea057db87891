/**
 * AuthStore over SQL: the logic of rotation, reuse detection and confirmation tokens; the
 * statements are storage's (storage/repos/sessions.ts). Checks that decide a race are single
 * check-and-set statements (then `changes`), so two requests presenting the same token can never
 * both win, even outside a transaction.
 */
import type { Dialect } from '../storage/dialect.js';
import type { RawRow, SqlRunner } from '../storage/driver.js';
import { sessionsRepo, type SessionsRepo } from '../storage/repos/sessions.js';
import type { RevokedSession } from './revocation.js';
import { authTokensTable, sessionsTable } from './schema.js';
import type { AuthStore, ConfirmKind, ConfirmRecord, NewConfirmToken, NewSession, RevokeReason, RotateInput, RotateOutcome, SessionOwner, SessionRecord } from './store.js';

const REFRESH = 'refresh';

/** PostgreSQL answers BIGINT as a string; SQLite as a number. */
const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));
const str = (v: unknown): string => String(v);
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

export class SqlAuthStore implements AuthStore {
  readonly #q: SessionsRepo;

  constructor(dialect: Dialect) {
    this.#q = sessionsRepo(dialect, { sessions: sessionsTable, tokens: authTokensTable });
  }

  async createSession(r: SqlRunner, s: NewSession): Promise<void> {
    await this.#q.insertSession(r, { id: s.id, table: s.table, userId: s.userId, now: s.now, expiresAt: s.expiresAt });
    await this.#q.insertToken(r, { id: s.refreshTokenId, kind: REFRESH, hash: s.refreshHash, table: s.table, userId: s.userId, sessionId: s.id, email: null, now: s.now, expiresAt: s.expiresAt });
  }

  async rotateRefreshToken(r: SqlRunner, input: RotateInput): Promise<RotateOutcome> {
    const row = await this.#q.findWithSession(r, input.hash, REFRESH);
    if (row === undefined) return { kind: 'invalid' };
    const sessionId = str(row.sessionId);
    if (row.revokedAt !== null && row.revokedAt !== undefined) return { kind: 'invalid' };
    if (row.usedAt !== null && row.usedAt !== undefined) return this.#reused(r, sessionId, input.now);
    if (num(row.expiresAt) <= input.now) return { kind: 'invalid' };
    const won = await this.#q.useSessionToken(r, input.hash, REFRESH, input.now);
    if (won.changes !== 1) {
      // Lost a race: someone used or revoked it between the read and the update.
      const again = await this.#q.findWithSession(r, input.hash, REFRESH);
      if (again && (again.revokedAt === null || again.revokedAt === undefined) && again.usedAt !== null && again.usedAt !== undefined) {
        return this.#reused(r, sessionId, input.now);
      }
      return { kind: 'invalid' };
    }
    const owner = { table: str(row.table), userId: str(row.userId) };
    await this.#q.insertToken(r, {
      id: input.newTokenId,
      kind: REFRESH,
      hash: input.newHash,
      table: owner.table,
      userId: owner.userId,
      sessionId,
      email: null,
      now: input.now,
      expiresAt: input.expiresAt,
    });
    await this.#q.slideSession(r, sessionId, input.now, input.expiresAt);
    return { kind: 'rotated', session: { id: sessionId, ...owner } };
  }

  async #reused(r: SqlRunner, sessionId: string, now: number): Promise<RotateOutcome> {
    await this.revokeSession(r, sessionId, now, 'reuse');
    return { kind: 'reused', sessionId };
  }

  async findSession(r: SqlRunner, sessionId: string): Promise<SessionRecord | null> {
    const row = await this.#q.findSession(r, sessionId);
    return row === undefined ? null : toSession(row);
  }

  async revokeSession(r: SqlRunner, sessionId: string, now: number, reason: RevokeReason): Promise<boolean> {
    return (await this.#q.revokeSession(r, sessionId, now, reason)).changes > 0;
  }

  async revokeAllForUser(r: SqlRunner, owner: SessionOwner, now: number, reason: RevokeReason): Promise<string[]> {
    const { changes } = await this.#q.revokeUser(r, owner.table, owner.userId, now, reason);
    if (changes === 0) return [];
    const rows = await this.#q.revokedUser(r, owner.table, owner.userId, now, reason);
    return rows.map((row) => str(row.id));
  }

  async revokedSince(r: SqlRunner, sinceMs: number): Promise<RevokedSession[]> {
    const rows = await this.#q.revokedSince(r, sinceMs);
    return rows.map((row) => ({
      sessionId: str(row.sessionId),
      revokedAt: num(row.revokedAt),
    }));
  }

  async createConfirmToken(r: SqlRunner, t: NewConfirmToken): Promise<void> {
    await this.#q.insertToken(r, { id: t.id, kind: t.kind, hash: t.hash, table: t.table, userId: t.userId, sessionId: null, email: t.email, now: t.now, expiresAt: t.expiresAt });
  }

  async consumeConfirmToken(r: SqlRunner, kind: ConfirmKind, hash: string, now: number): Promise<ConfirmRecord | null> {
    const row = await this.#q.findConfirm(r, hash, kind);
    if (row === undefined) return null;
    const won = await this.#q.useConfirm(r, hash, kind, now);
    if (won.changes !== 1) return null;
    const record: ConfirmRecord = {
      table: str(row.table),
      userId: str(row.userId),
      email: strOrNull(row.email),
    };
    // An older reset link must not work after a newer one was used (and vice versa).
    await this.#q.retireSiblings(r, record.table, record.userId, kind, now);
    return record;
  }

  async peekConfirmToken(r: SqlRunner, kind: ConfirmKind, hash: string, now: number): Promise<ConfirmRecord | null> {
    const row = await this.#q.peekConfirm(r, hash, kind, now);
    return row === undefined ? null : { table: str(row.table), userId: str(row.userId), email: strOrNull(row.email) };
  }

  async purgeExpired(r: SqlRunner, now: number, revokedBefore: number): Promise<number> {
    let n = (await this.#q.purgeExpiredTokens(r, REFRESH, now)).changes;
    n += (await this.#q.purgeTokensOfEnded(r, revokedBefore)).changes;
    n += (await this.#q.purgeEndedSessions(r, revokedBefore)).changes;
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
