/**
 * The narrow storage interface of the auth module (tables in schema.ts). Every method is one
 * self-contained operation on the `SqlRunner` it is given: the driver for reads, or the serialized
 * writer's transaction for writes (storage/writer.ts), so a write composes with the rest of a job
 * (e.g. a password reset: consume the token, store the new hash, revoke sessions — one commit).
 *
 * Methods that write never throw for a "no" answer: they report it in their result, because a job
 * that throws is rolled back, and some "no" answers must still write (a reused refresh token
 * revokes its session, docs/reference/auth.md). All times are epoch milliseconds.
 */
import type { SqlRunner } from '../storage/driver.js';
import type { RevokedSession } from './revocation.js';

/** `magic`: a magic sign-in link (docs/reference/auth.md); `changeEmail`: its `email` is the new address (docs/reference/auth.md). */
export type ConfirmKind = 'verify' | 'reset' | 'magic' | 'changeEmail';
/** Why sessions ended: `deleted` (the account row was deleted), `email` (an admin changed its email). */
export type RevokeReason = 'logout' | 'reuse' | 'reset' | 'user' | 'deleted' | 'email';

export interface SessionOwner {
  /** The auth table's name. */
  readonly table: string;
  readonly userId: string;
}

export interface SessionRecord extends SessionOwner {
  readonly id: string;
  readonly createdAt: number;
  readonly lastUsedAt: number;
  readonly expiresAt: number;
  readonly revokedAt: number | null;
  readonly revokeReason: string | null;
}

export interface NewSession extends SessionOwner {
  readonly id: string;
  readonly now: number;
  /** Expiry of the first refresh token, and of the session until it is refreshed. */
  readonly expiresAt: number;
  readonly refreshTokenId: string;
  readonly refreshHash: string;
}

export interface RotateInput {
  /** Hash of the refresh token presented. */
  readonly hash: string;
  readonly newTokenId: string;
  readonly newHash: string;
  readonly now: number;
  readonly expiresAt: number;
}

export type RotateOutcome =
  | { readonly kind: 'rotated'; readonly session: SessionOwner & { readonly id: string } }
  /** The token was already rotated: its session is now revoked (reason `reuse`). */
  | { readonly kind: 'reused'; readonly sessionId: string }
  /** Unknown, expired, or its session is revoked or gone. */
  | { readonly kind: 'invalid' };

export interface NewConfirmToken extends SessionOwner {
  readonly id: string;
  readonly kind: ConfirmKind;
  readonly hash: string;
  /** The address the token is sent to; the route checks it still is the user's. */
  readonly email: string | null;
  readonly now: number;
  readonly expiresAt: number;
}

export interface ConfirmRecord extends SessionOwner {
  readonly email: string | null;
}

export interface AuthStore {
  /** Inserts the session and its first refresh token. */
  createSession(r: SqlRunner, session: NewSession): Promise<void>;
  /**
   * Marks the presented refresh token used (a single check-and-set statement), stores its
   * successor and slides the session's expiry. A token already used revokes its session.
   */
  rotateRefreshToken(r: SqlRunner, input: RotateInput): Promise<RotateOutcome>;
  findSession(r: SqlRunner, sessionId: string): Promise<SessionRecord | null>;
  /** True when this call revoked it (false: unknown or already revoked). */
  revokeSession(r: SqlRunner, sessionId: string, now: number, reason: RevokeReason): Promise<boolean>;
  /** Revokes every live session of the user; answers their ids. */
  revokeAllForUser(r: SqlRunner, owner: SessionOwner, now: number, reason: RevokeReason): Promise<string[]>;
  /** Sessions revoked at or after `sinceMs`, oldest first (loads the RevocationList). */
  revokedSince(r: SqlRunner, sinceMs: number): Promise<RevokedSession[]>;
  createConfirmToken(r: SqlRunner, token: NewConfirmToken): Promise<void>;
  /**
   * Marks the token used if it is unused and unexpired (one check-and-set statement) and
   * retires the user's other unused tokens of the same kind. Null: unknown, used or expired.
   */
  consumeConfirmToken(r: SqlRunner, kind: ConfirmKind, hash: string, now: number): Promise<ConfirmRecord | null>;
  /** The unused, unexpired token's record without using it (a cheap check before costly work). */
  peekConfirmToken(r: SqlRunner, kind: ConfirmKind, hash: string, now: number): Promise<ConfirmRecord | null>;
  /**
   * Deletes expired confirmation tokens, and sessions (with their refresh tokens) that expired or
   * were revoked before `revokedBefore`. Answers the number of rows deleted.
   */
  purgeExpired(r: SqlRunner, now: number, revokedBefore: number): Promise<number>;
}
