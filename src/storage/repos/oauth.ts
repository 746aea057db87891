/**
 * `_oauth_states` and `_oauth_identities` (auth/schema.ts) for auth/oauth/states.ts and
 * identities.ts, which keep the logic. Using a state is one check-and-set UPDATE, so a replayed
 * callback can never win twice. See docs/reference/auth.md.
 */
import type { Dialect } from '../dialect.js';
import type { RawRow, SqlRunner } from '../driver.js';
import { as, join, sql, sqlExec, tableRef, type TableDecl } from '../sql.js';

export interface OAuthStateRow {
  id: string;
  stateHash: string;
  provider: string;
  table: string;
  codeVerifier: string;
  nonce: string | null;
  redirectUri: string;
  redirectTo: string;
  now: number;
  expiresAt: number;
}

export function oauthStatesRepo(d: Dialect, table: TableDecl<'stateHash' | 'provider' | 'authTable' | 'codeVerifier' | 'nonce' | 'redirectUri' | 'redirectTo' | 'createdAt' | 'expiresAt' | 'usedAt'>) {
  const x = sqlExec(d);
  const T = tableRef(table);
  const c = T.c;
  return {
    insert: (r: SqlRunner, v: OAuthStateRow) =>
      x.run(
        r,
        sql`INSERT INTO ${T.table} (${join([c.id, c.stateHash, c.provider, c.authTable, c.codeVerifier, c.nonce, c.redirectUri, c.redirectTo, c.createdAt, c.expiresAt])}) VALUES (${join([v.id, v.stateHash, v.provider, v.table, v.codeVerifier, v.nonce, v.redirectUri, v.redirectTo, v.now, v.expiresAt])})`,
      ),
    find: (r: SqlRunner, hash: string): Promise<RawRow | undefined> =>
      x.get(
        r,
        sql`SELECT ${join([as(c.provider, 'provider'), as(c.authTable, 'table'), as(c.codeVerifier, 'verifier'), as(c.nonce, 'nonce'), as(c.redirectUri, 'redirectUri'), as(c.redirectTo, 'redirectTo')])} FROM ${T.table} WHERE ${c.stateHash} = ${hash}`,
      ),
    /** The check-and-set: only an unused, unexpired state. */
    use: (r: SqlRunner, hash: string, now: number) => x.run(r, sql`UPDATE ${T.table} SET ${c.usedAt} = ${now} WHERE ${c.stateHash} = ${hash} AND ${c.usedAt} IS NULL AND ${c.expiresAt} > ${now}`),
    purge: (r: SqlRunner, expiredBy: number) => x.run(r, sql`DELETE FROM ${T.table} WHERE ${c.expiresAt} <= ${expiredBy}`),
  };
}

export function oauthIdentitiesRepo(d: Dialect, table: TableDecl<'provider' | 'subject' | 'authTable' | 'userId' | 'email' | 'createdAt'>) {
  const x = sqlExec(d);
  const T = tableRef(table);
  const c = T.c;
  const bySubject = (table: string, provider: string, subject: string) => sql`${c.authTable} = ${table} AND ${c.provider} = ${provider} AND ${c.subject} = ${subject}`;
  return {
    find: (r: SqlRunner, table: string, provider: string, subject: string): Promise<RawRow | undefined> =>
      x.get(r, sql`SELECT ${as(c.userId, 'userId')} FROM ${T.table} WHERE ${bySubject(table, provider, subject)}`),
    /** Two first sign-ins of one subject at once: the unique index keeps one row, the other is a no-op. */
    insert: (r: SqlRunner, v: { id: string; provider: string; subject: string; table: string; userId: string; email: string | null; now: number }) =>
      x.run(
        r,
        sql`INSERT INTO ${T.table} (${join([c.id, c.provider, c.subject, c.authTable, c.userId, c.email, c.createdAt])}) VALUES (${join([v.id, v.provider, v.subject, v.table, v.userId, v.email, v.now])}) ON CONFLICT DO NOTHING`,
      ),
    delete: (r: SqlRunner, table: string, provider: string, subject: string) => x.run(r, sql`DELETE FROM ${T.table} WHERE ${bySubject(table, provider, subject)}`),
  };
}
