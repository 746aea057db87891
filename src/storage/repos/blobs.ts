/**
 * `_blobs` (key, part, bytes): photo bytes kept in the database in parts, for
 * photos/db-blob-store.ts, which keeps the logic (streaming parts in and out, the disk cache).
 * The table has no declaration (it is not a project table and never migrates): storage creates it
 * once per database, with the dialect's byte type. See docs/reference/photos.md.
 */
import type { Dialect } from '../dialect.js';
import type { Driver, RawRow, SqlRunner } from '../driver.js';
import { as, blobType, namedRef, sql, sqlExec } from '../sql.js';

export const BLOBS_TABLE = '_blobs';
const B = namedRef(BLOBS_TABLE, ['key', 'part', 'bytes']);

/** Creates the table once per database (under the migration lock, so nodes never race). */
export async function prepareBlobTable(driver: Driver): Promise<void> {
  const create = sql`CREATE TABLE IF NOT EXISTS ${B.table} (${B.c.key} TEXT NOT NULL, ${B.c.part} INTEGER NOT NULL, ${B.c.bytes} ${blobType} NOT NULL, PRIMARY KEY (${B.c.key}, ${B.c.part}))`;
  await driver.exclusive('tablebase:migrations', () => sqlExec(driver.dialect).run(driver, create));
}

export function blobsRepo(d: Dialect) {
  const x = sqlExec(d);
  const { key, part, bytes } = B.c;
  return {
    insertPart: (r: SqlRunner, k: string, n: number, data: Uint8Array) => x.run(r, sql`INSERT INTO ${B.table} (${key}, ${part}, ${bytes}) VALUES (${k}, ${n}, ${data})`),
    part: (r: SqlRunner, k: string, n: number): Promise<RawRow | undefined> => x.get(r, sql`SELECT ${as(bytes, 'bytes')} FROM ${B.table} WHERE ${key} = ${k} AND ${part} = ${n}`),
    exists: async (r: SqlRunner, k: string): Promise<boolean> => (await x.get(r, sql`SELECT ${as(sql`1`, 'one')} FROM ${B.table} WHERE ${key} = ${k} AND ${part} = 0`)) !== undefined,
    /** Deletes `k` and every key under `k/` (thumbnails). Keys are photo ids ([0-9a-z_]) and `/`: the pattern has no wildcard of the client's. */
    remove: (r: SqlRunner, k: string) => x.run(r, sql`DELETE FROM ${B.table} WHERE ${key} = ${k} OR ${key} LIKE ${`${k}/%`}`),
  };
}

export type BlobsRepo = ReturnType<typeof blobsRepo>;
