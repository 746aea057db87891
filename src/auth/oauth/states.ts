/**
 * Pending OAuth sign-ins (docs/reference/auth.md): `state`, the PKCE verifier and the OIDC nonce, stored
 * server-side (the database, so a callback may land on another node than the start), single-use
 * and expiring after 10 minutes. `state` is kept only as its SHA-256 (it is a bearer secret of
 * 256 bits); using it is one check-and-set UPDATE, so a replayed callback can never win twice.
 */
import type { Dialect } from '../../storage/dialect.js';
import type { SqlRunner } from '../../storage/driver.js';
import { newId as defaultNewId } from '../../storage/ids.js';
import { oauthStatesRepo } from '../../storage/repos/oauth.js';
import { hashOpaqueToken, isOpaqueToken, newOpaqueToken } from '../opaque.js';
import { oauthStatesTable } from '../schema.js';
import type { WriteFn } from '../sessions.js';

export const OAUTH_STATE_TTL_SECONDS = 600;

export interface PendingSignIn {
  readonly provider: string;
  readonly table: string;
  readonly codeVerifier: string;
  readonly nonce: string | null;
  readonly redirectUri: string;
  readonly redirectTo: string;
}

export type StateLookup =
  /** Unknown (or tampered): no `redirectTo` can be trusted. */
  | { readonly kind: 'unknown' }
  /** Known but used or expired: the browser goes back with an error. */
  | { readonly kind: 'spent'; readonly redirectTo: string }
  | { readonly kind: 'ok'; readonly pending: PendingSignIn };

export class OAuthStates {
  readonly #q: ReturnType<typeof oauthStatesRepo>;
  readonly #write: WriteFn;
  readonly #now: () => number;
  readonly #newId: (prefix: string) => string;

  constructor(o: { dialect: Dialect; write: WriteFn; now?: () => number; newId?: (prefix: string) => string }) {
    this.#q = oauthStatesRepo(o.dialect, oauthStatesTable);
    this.#write = o.write;
    this.#now = o.now ?? Date.now;
    this.#newId = o.newId ?? defaultNewId;
  }

  /** Stores the pending sign-in and answers its `state`. */
  async create(p: PendingSignIn): Promise<string> {
    const state = newOpaqueToken();
    const now = this.#now();
    await this.#write((tx) =>
      this.#q.insert(tx, {
        id: this.#newId(oauthStatesTable.options.prefix),
        stateHash: hashOpaqueToken(state),
        provider: p.provider,
        table: p.table,
        codeVerifier: p.codeVerifier,
        nonce: p.nonce,
        redirectUri: p.redirectUri,
        redirectTo: p.redirectTo,
        now,
        expiresAt: now + OAUTH_STATE_TTL_SECONDS * 1000,
      }),
    );
    return state;
  }

  /** Uses the state up (once) and answers what was stored with it. */
  async consume(state: unknown): Promise<StateLookup> {
    if (!isOpaqueToken(state)) return { kind: 'unknown' };
    const hash = hashOpaqueToken(state);
    return this.#write(async (tx: SqlRunner) => {
      const row = await this.#q.find(tx, hash);
      if (row === undefined) return { kind: 'unknown' } as const;
      const redirectTo = String(row.redirectTo);
      const won = await this.#q.use(tx, hash, this.#now());
      if (won.changes !== 1) return { kind: 'spent', redirectTo } as const;
      return {
        kind: 'ok',
        pending: {
          provider: String(row.provider),
          table: String(row.table),
          codeVerifier: String(row.verifier),
          nonce: row.nonce === null || row.nonce === undefined ? null : String(row.nonce),
          redirectUri: String(row.redirectUri),
          redirectTo,
        },
      } as const;
    });
  }

  /** Deletes states older than their lifetime; answers how many. */
  purgeExpired(): Promise<number> {
    return this.#write(async (tx) => (await this.#q.purge(tx, this.#now() - OAUTH_STATE_TTL_SECONDS * 1000)).changes);
  }
}
