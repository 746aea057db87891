/**
 * Email-verification and password-reset tokens (docs/reference/auth.md): random, stored hashed, single-use,
 * expiring (defaults 24 h and 1 h, from the project's `auth` settings). Consuming is one
 * check-and-set statement, so a token clicked twice at once works once. Unknown, used or expired:
 * 400 INVALID_CONFIRMATION_TOKEN (docs/reference/auth.md), the same answer for all three.
 *
 * The token is bound to the email it was sent to; the confirm route compares it with the user's
 * current address, so a link sent to an old address cannot verify a new one.
 */
import { ApiError } from '../core/errors.js';
import type { SqlRunner } from '../storage/driver.js';
import { newId as defaultNewId } from '../storage/ids.js';
import { hashOpaqueToken, isOpaqueToken, newOpaqueToken } from './opaque.js';
import { TOKENS_PREFIX } from './schema.js';
import type { WriteFn } from './sessions.js';
import type { AuthStore, ConfirmKind, ConfirmRecord, SessionOwner } from './store.js';

export interface ConfirmTokensOptions {
  store: AuthStore;
  write: WriteFn;
  verifyTokenTtlSeconds: number;
  resetTokenTtlSeconds: number;
  /** docs/reference/auth.md: 15 minutes by default. */
  magicLinkTtlSeconds?: number;
  /** docs/reference/auth.md: 1 hour by default. */
  changeEmailTtlSeconds?: number;
  /** Epoch milliseconds. */
  now?: () => number;
  newId?: (prefix: string) => string;
}

export interface IssuedConfirmToken {
  /** Goes into the email link (`{token}`); never stored. */
  readonly token: string;
  /** Epoch milliseconds. */
  readonly expiresAt: number;
}

const invalidConfirmation = (): ApiError => new ApiError('INVALID_CONFIRMATION_TOKEN');

export class ConfirmTokens {
  #store: AuthStore;
  #write: WriteFn;
  #ttlMs: Record<ConfirmKind, number>;
  #now: () => number;
  #newId: (prefix: string) => string;

  constructor(o: ConfirmTokensOptions) {
    this.#store = o.store;
    this.#write = o.write;
    this.#ttlMs = {
      verify: o.verifyTokenTtlSeconds * 1000,
      reset: o.resetTokenTtlSeconds * 1000,
      magic: (o.magicLinkTtlSeconds ?? 900) * 1000,
      changeEmail: (o.changeEmailTtlSeconds ?? 3600) * 1000,
    };
    this.#now = o.now ?? Date.now;
    this.#newId = o.newId ?? defaultNewId;
  }

  #run<T>(tx: SqlRunner | undefined, fn: (r: SqlRunner) => Promise<T>): Promise<T> {
    return tx === undefined ? this.#write(fn) : fn(tx);
  }

  /** Stores a new token for `owner` and answers it for the email. Earlier tokens stay valid until used or expired. */
  async issue(kind: ConfirmKind, owner: SessionOwner & { email: string | null }, tx?: SqlRunner): Promise<IssuedConfirmToken> {
    const now = this.#now();
    const token = newOpaqueToken();
    const expiresAt = now + this.#ttlMs[kind];
    await this.#run(tx, (r) =>
      this.#store.createConfirmToken(r, {
        id: this.#newId(TOKENS_PREFIX),
        kind,
        hash: hashOpaqueToken(token),
        table: owner.table,
        userId: owner.userId,
        email: owner.email,
        now,
        expiresAt,
      }),
    );
    return { token, expiresAt };
  }

  /**
   * The token's record if it is live, without using it up; throws 400 INVALID_CONFIRMATION_TOKEN
   * otherwise. For the cheap check before costly work (docs/reference/auth.md: a confirm with an unknown token
   * is refused before any password is hashed); `consume` still decides the race.
   */
  async peek(kind: ConfirmKind, token: unknown, reader: SqlRunner): Promise<ConfirmRecord> {
    if (!isOpaqueToken(token)) throw invalidConfirmation();
    const record = await this.#store.peekConfirmToken(reader, kind, hashOpaqueToken(token), this.#now());
    if (record === null) throw invalidConfirmation();
    return record;
  }

  /**
   * Uses up a token and answers whose it was, or throws 400 INVALID_CONFIRMATION_TOKEN. Pass the
   * job's transaction to make it atomic with what the confirmation does (set `isVerified`, store
   * the new password hash, revoke sessions): if that fails, the token is not used up either.
   */
  async consume(kind: ConfirmKind, token: unknown, tx?: SqlRunner): Promise<ConfirmRecord> {
    if (!isOpaqueToken(token)) throw invalidConfirmation();
    const now = this.#now();
    const hash = hashOpaqueToken(token);
    // A miss returns null rather than throwing inside the write, so the job itself succeeds.
    const record = await this.#run(tx, (r) => this.#store.consumeConfirmToken(r, kind, hash, now));
    if (record === null) throw invalidConfirmation();
    return record;
  }
}
