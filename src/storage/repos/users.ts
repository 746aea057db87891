/** Reads of auth-table rows the generic plans cannot express: the only read of a password hash. */
import type { CollectionModel } from '../../core/model.js';
import type { Dialect } from '../dialect.js';
import type { SqlRunner } from '../driver.js';
import { as, modelRef, sql, sqlExec } from '../sql.js';

/** The stored password hash of the user with `email`, with the user's id. */
export async function findCredentials(r: SqlRunner, d: Dialect, c: CollectionModel, email: string): Promise<{ id: string; hash: unknown } | null> {
  const T = modelRef(c);
  const row = await sqlExec(d).get(r, sql`SELECT ${as(T.c.id!, 'id')}, ${as(T.c.password!, 'hash')} FROM ${T.table} WHERE ${T.c.email!} = ${email}`);
  return row ? { id: String(row.id), hash: row.hash } : null;
}
