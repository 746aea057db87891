/**
 * Pending OAuth sign-ins (SPEC §8a): `state`, the PKCE verifier and the OIDC nonce, stored
 * server-side (the database, so a callback may land on another node than the start), single-use
 * and expiring after 10 minutes. `state` is kept only as its SHA-256 (it is a bearer secret of
 * 256 bits); using it is one check-and-set UPDATE, so a replayed callback can never win twice.
 */
import { toSnake } from '../../core/naming.js';
import type { Dialect } from '../../storage/dialect.js';
import type { SqlRunner } from '../../storage/driver.js';
import { newId as defaultNewId } from '../../storage/ids.js';
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

function statements(d: Dialect) {
  const q = (c: keyof typeof oauthStatesTable.columns | 'id') => d.quote(toSnake(c));
  const T = d.quote(oauthStatesTable.name);
  const p = (n: number) => d.param(n);
  const cols = ['id', 'stateHash', 'provider', 'authTable', 'codeVerifier', 'nonce', 'redirectUri', 'redirectTo', 'createdAt', 'expiresAt'] as const;
  return {
    insert: `INSERT INTO ${T} (${cols.map(q).join(', ')}) VALUES (${cols.map((_, i) => p(i + 1)).join(', ')})`,
    find:
      `SELECT ${q('provider')} AS provider, ${q('authTable')} AS "table", ${q('codeVerifier')} AS verifier, ${q('nonce')} AS nonce, ` +
      `${q('redirectUri')} AS "redirectUri", ${q('redirectTo')} AS "redirectTo" FROM ${T} WHERE ${q('stateHash')} = ${p(1)}`,
    use: `UPDATE ${T} SET ${q('usedAt')} = ${p(1)} WHERE ${q('stateHash')} = ${p(2)} AND ${q('usedAt')} IS NULL AND ${q('expiresAt')} > ${p(3)}`,
    // Used rows stay a while so a replay is recognized (and answered with the error redirect).
    purge: `DELETE FROM ${T} WHERE ${q('expiresAt')} <= ${p(1)}`,
  };
}

export class OAuthStates {
  readonly #q: ReturnType<typeof statements>;
  readonly #write: WriteFn;
  readonly #now: () => number;
  readonly #newId: (prefix: string) => string;

  constructor(o: { dialect: Dialect; write: WriteFn; now?: () => number; newId?: (prefix: string) => string }) {
    this.#q = statements(o.dialect);
    this.#write = o.write;
    this.#now = o.now ?? Date.now;
    this.#newId = o.newId ?? defaultNewId;
  }

  /** Stores the pending sign-in and answers its `state`. */
  async create(p: PendingSignIn): Promise<string> {
    const state = newOpaqueToken();
    const now = this.#now();
    await this.#write((tx) =>
      tx.run(this.#q.insert, [
        this.#newId(oauthStatesTable.options.prefix),
        hashOpaqueToken(state),
        p.provider,
        p.table,
        p.codeVerifier,
        p.nonce,
        p.redirectUri,
        p.redirectTo,
        now,
        now + OAUTH_STATE_TTL_SECONDS * 1000,
      ]),
    );
    return state;
  }

  /** Uses the state up (once) and answers what was stored with it. */
  async consume(state: unknown): Promise<StateLookup> {
    if (!isOpaqueToken(state)) return { kind: 'unknown' };
    const hash = hashOpaqueToken(state);
    return this.#write(async (tx: SqlRunner) => {
      const row = await tx.get(this.#q.find, [hash]);
      if (row === undefined) return { kind: 'unknown' } as const;
      const redirectTo = String(row.redirectTo);
      const won = await tx.run(this.#q.use, [this.#now(), hash, this.#now()]);
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
    return this.#write(async (tx) => (await tx.run(this.#q.purge, [this.#now() - OAUTH_STATE_TTL_SECONDS * 1000])).changes);
  }
}
