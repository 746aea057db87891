/**
 * The driver builds rows from raw value arrays (driver.ts, rowMaker): they must be the objects
 * better-sqlite3 itself builds, key order, duplicate names and odd names included, on both
 * connections and through every read method.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqlite, type SqliteDriver } from './driver.js';

let dir: string;
let db: SqliteDriver;
let plain: Database.Database;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tb-driver-rows-'));
  db = openSqlite(join(dir, 'db.sqlite'));
  await db.execScript(`CREATE TABLE t (id TEXT PRIMARY KEY, n INTEGER, r REAL, b BLOB, j TEXT, "2" TEXT, "we""ird" TEXT)`);
  await db.run(`INSERT INTO t VALUES ('a', 1, 1.5, x'0102', '{"k":[1]}', 'two', 'q'), ('b', NULL, NULL, NULL, NULL, NULL, NULL)`);
  plain = new Database(join(dir, 'db.sqlite'), { readonly: true });
});
afterAll(async () => {
  plain.close();
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

const queries = [
  `SELECT id, n, r, b, j, "2", "we""ird" FROM t ORDER BY id`,
  `SELECT id AS "x", n AS "x", r FROM t ORDER BY id`, // a duplicate name: its first place, its last value
  `SELECT id, n AS "__proto__" FROM t ORDER BY id`, // a name that sets the prototype (to null for row b)
  `SELECT id AS "constructor", n AS "toString", r AS "" FROM t ORDER BY id`,
  `SELECT COUNT(*) AS n FROM t`,
];

describe('rows read by the driver', () => {
  it.each(queries)('equal better-sqlite3 objects, keys in order: %s', async (sql) => {
    const want = plain.prepare(sql).all() as Record<string, unknown>[];
    for (let round = 0; round < 2; round++) {
      // The second round runs the cached statement.
      const got = await db.all(sql);
      expect(got).toEqual(want);
      expect(got.map((r) => Object.keys(r))).toEqual(want.map((r) => Object.keys(r)));
      expect(got.map((r) => Object.getPrototypeOf(r))).toEqual(want.map((r) => Object.getPrototypeOf(r)));
      expect(db.allSync(sql)).toEqual(want);
      expect(await db.get(sql)).toEqual(want[0]);
      expect(db.getSync(sql)).toEqual(want[0]);
      await db.transaction(async (tx) => {
        expect(await tx.all(sql)).toEqual(want);
        expect(await tx.get(sql)).toEqual(want[0]);
      });
    }
  });

  it('answers undefined for no row and [] for none', async () => {
    expect(await db.get(`SELECT id FROM t WHERE id = ?`, ['zz'])).toBeUndefined();
    expect(await db.all(`SELECT id FROM t WHERE id = ?`, ['zz'])).toEqual([]);
  });

  it('returns rows a write returns (RETURNING) and nothing for other writes', async () => {
    await db.transaction(async (tx) => {
      expect(await tx.all(`INSERT INTO t (id, n) VALUES (?, ?) RETURNING id, n`, ['c', 3])).toEqual([{ id: 'c', n: 3 }]);
      expect(await tx.all(`UPDATE t SET n = 4 WHERE id = 'c'`)).toEqual([]);
      expect(await tx.run(`DELETE FROM t WHERE id = 'c'`)).toEqual({ changes: 1 });
    });
  });
});
