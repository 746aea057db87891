/**
 * `_photos` ids in id order, a page at a time (keyset), for `tablebase storage migrate`
 * (photos/migrate.ts; docs/reference/object-storage.md): any number of photos, bounded memory.
 * Rows themselves are read and written through the model like any table (server/photo-repo.ts).
 */
import type { Dialect } from '../dialect.js';
import type { SqlRunner } from '../driver.js';
import { as, namedRef, sql, sqlExec } from '../sql.js';

const P = namedRef('_photos', ['id']);

export function photoIdsRepo(d: Dialect) {
  const x = sqlExec(d);
  return {
    /** Up to `limit` ids greater than `after` ('' for the first page), ascending. */
    idsAfter: async (r: SqlRunner, after: string, limit: number): Promise<string[]> =>
      (await x.all(r, sql`SELECT ${as(P.c.id, 'id')} FROM ${P.table} WHERE ${P.c.id} > ${after} ORDER BY ${P.c.id} LIMIT ${limit}`)).map((row) => String(row.id)),
  };
}
