/** `_oauth_identities` (SPEC §8a): which provider account (provider, subject) is which user. */
import { toSnake } from '../../core/naming.js';
import type { Dialect } from '../../storage/dialect.js';
import type { SqlRunner } from '../../storage/driver.js';
import { newId as defaultNewId } from '../../storage/ids.js';
import { oauthIdentitiesTable } from '../schema.js';
import type { WriteFn } from '../sessions.js';

export class OAuthIdentities {
  readonly #find: string;
  readonly #insert: string;
  readonly #delete: string;
  readonly #reader: SqlRunner;
  readonly #write: WriteFn;
  readonly #now: () => number;
  readonly #newId: (prefix: string) => string;

  constructor(o: { dialect: Dialect; reader: SqlRunner; write: WriteFn; now?: () => number; newId?: (prefix: string) => string }) {
    const d = o.dialect;
    const q = (c: keyof typeof oauthIdentitiesTable.columns | 'id') => d.quote(toSnake(c));
    const T = d.quote(oauthIdentitiesTable.name);
    this.#find = `SELECT ${q('userId')} AS "userId" FROM ${T} WHERE ${q('authTable')} = ${d.param(1)} AND ${q('provider')} = ${d.param(2)} AND ${q('subject')} = ${d.param(3)}`;
    const cols = ['id', 'provider', 'subject', 'authTable', 'userId', 'email', 'createdAt'] as const;
    // Two first sign-ins of one subject at once: the unique index keeps one row, the other is a no-op.
    this.#insert = `INSERT INTO ${T} (${cols.map(q).join(', ')}) VALUES (${cols.map((_, i) => d.param(i + 1)).join(', ')}) ON CONFLICT DO NOTHING`;
    this.#delete = `DELETE FROM ${T} WHERE ${q('authTable')} = ${d.param(1)} AND ${q('provider')} = ${d.param(2)} AND ${q('subject')} = ${d.param(3)}`;
    this.#reader = o.reader;
    this.#write = o.write;
    this.#now = o.now ?? Date.now;
    this.#newId = o.newId ?? defaultNewId;
  }

  /** The user id linked to (table, provider, subject), or null. */
  async find(table: string, provider: string, subject: string): Promise<string | null> {
    const row = await this.#reader.get(this.#find, [table, provider, subject]);
    return row === undefined ? null : String(row.userId);
  }

  /** Drops a link whose user row is gone, so the subject can sign up or link again. */
  async forget(table: string, provider: string, subject: string): Promise<void> {
    await this.#write((tx) => tx.run(this.#delete, [table, provider, subject]));
  }

  async link(table: string, provider: string, subject: string, userId: string, email: string | null): Promise<void> {
    await this.#write((tx) => tx.run(this.#insert, [this.#newId(oauthIdentitiesTable.options.prefix), provider, subject, table, userId, email, this.#now()]));
  }
}
