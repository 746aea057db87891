/**
 * Sessions and refresh tokens (docs/reference/auth.md). A sign-in starts a session and hands out
 * an opaque refresh token, stored only as its SHA-256. Each refresh rotates it: the old token is
 * marked used and a new one answered. Presenting a used token again means it leaked (or a client
 * raced itself): the whole session is revoked, together with its access tokens (RFC 9700 §4.14.2,
 * refresh token rotation with reuse detection). Unknown, expired, revoked or reused: 401
 * INVALID_TOKEN.
 *
 * Writes run through `write` (the serialized writer's submit) or inside a transaction the caller
 * passes. A revocation reaches the in-memory RevocationList as soon as its statement ran, before
 * the commit: if the commit then fails, a session was ended early, which is the safe direction.
 */
import { ApiError } from '../core/errors.js';
import type { SqlRunner } from '../storage/driver.js';
import { newId as defaultNewId } from '../storage/ids.js';
import { hashOpaqueToken, isOpaqueToken, newOpaqueToken } from './opaque.js';
import type { RevocationList } from './revocation.js';
import { SESSIONS_PREFIX, TOKENS_PREFIX } from './schema.js';
import type { AuthStore, RevokeReason, SessionOwner, SessionRecord } from './store.js';

/** Runs `fn` as one write (writer.submit, or driver.transaction in tests). */
export type WriteFn = <T>(fn: (tx: SqlRunner) => Promise<T>) => Promise<T>;

export interface SessionManagerOptions {
  store: AuthStore;
  /** Where reads run (the driver: committed data only). */
  reader: SqlRunner;
  write: WriteFn;
  revocations: RevocationList;
  refreshTokenTtlSeconds: number;
  /** Epoch milliseconds. */
  now?: () => number;
  newId?: (prefix: string) => string;
}

export interface StartedSession {
  readonly sessionId: string;
  readonly refreshToken: string;
  /** Epoch milliseconds. */
  readonly refreshExpiresAt: number;
}

export interface RefreshedSession extends StartedSession, SessionOwner {}

const invalidToken = (): ApiError => new ApiError('INVALID_TOKEN');

export class SessionManager {
  #store: AuthStore;
  #reader: SqlRunner;
  #write: WriteFn;
  #revocations: RevocationList;
  #ttlMs: number;
  #now: () => number;
  #newId: (prefix: string) => string;

  constructor(o: SessionManagerOptions) {
    this.#store = o.store;
    this.#reader = o.reader;
    this.#write = o.write;
    this.#revocations = o.revocations;
    this.#ttlMs = o.refreshTokenTtlSeconds * 1000;
    this.#now = o.now ?? Date.now;
    this.#newId = o.newId ?? defaultNewId;
  }

  #run<T>(tx: SqlRunner | undefined, fn: (r: SqlRunner) => Promise<T>): Promise<T> {
    return tx === undefined ? this.#write(fn) : fn(tx);
  }

  /** Starts a session for a user whose credentials were just checked (sign-up, sign-in). */
  async start(owner: SessionOwner, tx?: SqlRunner): Promise<StartedSession> {
    const now = this.#now();
    const refreshToken = newOpaqueToken();
    const session = {
      id: this.#newId(SESSIONS_PREFIX),
      table: owner.table,
      userId: owner.userId,
      now,
      expiresAt: now + this.#ttlMs,
      refreshTokenId: this.#newId(TOKENS_PREFIX),
      refreshHash: hashOpaqueToken(refreshToken),
    };
    await this.#run(tx, (r) => this.#store.createSession(r, session));
    return { sessionId: session.id, refreshToken, refreshExpiresAt: session.expiresAt };
  }

  /**
   * Rotates a refresh token: answers the session's owner and a new refresh token (the caller
   * loads the user, signs a new access token and fires `onRefresh`). Runs as its own write, so a
   * reuse's revocation commits before the 401 is thrown.
   */
  async refresh(refreshToken: unknown): Promise<RefreshedSession> {
    // Anything not shaped like our tokens is refused before hashing or touching the database.
    if (!isOpaqueToken(refreshToken)) throw invalidToken();
    const now = this.#now();
    const next = newOpaqueToken();
    const input = {
      hash: hashOpaqueToken(refreshToken),
      newTokenId: this.#newId(TOKENS_PREFIX),
      newHash: hashOpaqueToken(next),
      now,
      expiresAt: now + this.#ttlMs,
    };
    const outcome = await this.#write(async (r) => {
      const o = await this.#store.rotateRefreshToken(r, input);
      if (o.kind === 'reused') this.#revocations.revoke(o.sessionId, now);
      return o;
    });
    if (outcome.kind !== 'rotated') throw invalidToken();
    const { id, table, userId } = outcome.session;
    return { sessionId: id, table, userId, refreshToken: next, refreshExpiresAt: input.expiresAt };
  }

  /** Ends one session and its access tokens (POST /auth/logout). False: unknown or already ended. */
  async logout(sessionId: string, tx?: SqlRunner): Promise<boolean> {
    const now = this.#now();
    // Into the list first: the caller holds a verified token of this session, so it exists.
    this.#revocations.revoke(sessionId, now);
    return this.#run(tx, (r) => this.#store.revokeSession(r, sessionId, now, 'logout'));
  }

  /** Ends every session of a user (a confirmed password reset: docs/reference/auth.md). Answers their ids. */
  async revokeAllForUser(owner: SessionOwner, reason: RevokeReason = 'user', tx?: SqlRunner): Promise<string[]> {
    const now = this.#now();
    return this.#run(tx, async (r) => {
      const ids = await this.#store.revokeAllForUser(r, owner, now, reason);
      for (const id of ids) this.#revocations.revoke(id, now);
      return ids;
    });
  }

  find(sessionId: string): Promise<SessionRecord | null> {
    return this.#store.findSession(this.#reader, sessionId);
  }

  /** Loads recent revocations into the RevocationList (at start; periodically with several nodes). */
  async loadRevocations(): Promise<number> {
    const rows = await this.#store.revokedSince(this.#reader, this.#now() - this.#revocations.retentionMs);
    this.#revocations.load(rows);
    return rows.length;
  }

  /** Deletes expired tokens and sessions no longer needed for reuse detection or revocation. */
  purgeExpired(): Promise<number> {
    const now = this.#now();
    return this.#write((r) => this.#store.purgeExpired(r, now, now - this.#revocations.retentionMs));
  }
}
