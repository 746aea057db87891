/** `_oauth_identities` (docs/reference/auth.md): which provider account (provider, subject) is which user. */
import type { Dialect } from '../../storage/dialect.js';
import type { SqlRunner } from '../../storage/driver.js';
import { newId as defaultNewId } from '../../storage/ids.js';
import { oauthIdentitiesRepo } from '../../storage/repos/oauth.js';
import { oauthIdentitiesTable } from '../schema.js';
import type { WriteFn } from '../sessions.js';

export class OAuthIdentities {
  readonly #q: ReturnType<typeof oauthIdentitiesRepo>;
  readonly #reader: SqlRunner;
  readonly #write: WriteFn;
  readonly #now: () => number;
  readonly #newId: (prefix: string) => string;

  constructor(o: { dialect: Dialect; reader: SqlRunner; write: WriteFn; now?: () => number; newId?: (prefix: string) => string }) {
    this.#q = oauthIdentitiesRepo(o.dialect, oauthIdentitiesTable);
    this.#reader = o.reader;
    this.#write = o.write;
    this.#now = o.now ?? Date.now;
    this.#newId = o.newId ?? defaultNewId;
  }

  /** The user id linked to (table, provider, subject), or null. */
  async find(table: string, provider: string, subject: string): Promise<string | null> {
    const row = await this.#q.find(this.#reader, table, provider, subject);
    return row === undefined ? null : String(row.userId);
  }

  /** Drops a link whose user row is gone, so the subject can sign up or link again. */
  async forget(table: string, provider: string, subject: string): Promise<void> {
    await this.#write((tx) => this.#q.delete(tx, table, provider, subject));
  }

  async link(table: string, provider: string, subject: string, userId: string, email: string | null): Promise<void> {
    await this.#write((tx) => this.#q.insert(tx, { id: this.#newId(oauthIdentitiesTable.options.prefix), provider, subject, table, userId, email, now: this.#now() }));
  }
}
