/**
 * `_otp_codes` (auth/schema.ts) for auth/otp.ts, which keeps the logic (hashing, constant-time
 * comparison, attempt budget). Spending an attempt is one check-and-set UPDATE (`attempts < max`),
 * so parallel guesses cannot exceed the budget. See docs/reference/auth.md.
 */
import type { Dialect } from '../dialect.js';
import type { RawRow, SqlRunner } from '../driver.js';
import { as, excluded, join, onConflictUpdate, sql, sqlExec, tableRef, type TableDecl } from '../sql.js';

export function otpRepo(d: Dialect, table: TableDecl<'authTable' | 'email' | 'codeHash' | 'attempts' | 'createdAt' | 'expiresAt' | 'usedAt'>) {
  const x = sqlExec(d);
  const T = tableRef(table);
  const c = T.c;
  return {
    /** A new send replaces the previous code of (table, email), and its spent attempts. */
    upsert: (r: SqlRunner, v: { id: string; table: string; email: string; hash: string; now: number; expiresAt: number }) =>
      x.run(
        r,
        sql`INSERT INTO ${T.table} (${join([c.id, c.authTable, c.email, c.codeHash, c.attempts, c.createdAt, c.expiresAt, c.usedAt])}) VALUES (${join([v.id, v.table, v.email, v.hash])}, 0, ${join([v.now, v.expiresAt])}, NULL) ${onConflictUpdate(
          d,
          [c.authTable, c.email],
          sql`${c.codeHash} = ${excluded(c.codeHash)}, ${c.attempts} = 0, ${c.createdAt} = ${excluded(c.createdAt)}, ${c.expiresAt} = ${excluded(c.expiresAt)}, ${c.usedAt} = NULL`,
        )}`,
      ),
    /** Spends one attempt of the live code of (table, email); `changes` 0 when none is left. */
    spend: (r: SqlRunner, table: string, email: string, now: number, maxAttempts: number) =>
      x.run(
        r,
        sql`UPDATE ${T.table} SET ${c.attempts} = ${c.attempts} + 1 WHERE ${c.authTable} = ${table} AND ${c.email} = ${email} AND ${c.usedAt} IS NULL AND ${c.expiresAt} > ${now} AND ${c.attempts} < ${maxAttempts}`,
      ),
    read: (r: SqlRunner, table: string, email: string): Promise<RawRow | undefined> =>
      x.get(r, sql`SELECT ${as(c.id, 'id')}, ${as(c.codeHash, 'hash')} FROM ${T.table} WHERE ${c.authTable} = ${table} AND ${c.email} = ${email}`),
    use: (r: SqlRunner, id: string, now: number) => x.run(r, sql`UPDATE ${T.table} SET ${c.usedAt} = ${now} WHERE ${c.id} = ${id} AND ${c.usedAt} IS NULL`),
    purge: (r: SqlRunner, now: number) => x.run(r, sql`DELETE FROM ${T.table} WHERE ${c.expiresAt} <= ${now}`),
  };
}

export type OtpRepo = ReturnType<typeof otpRepo>;
