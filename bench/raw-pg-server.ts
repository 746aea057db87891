/**
 * The PostgreSQL baseline: a raw node:http + pg server running the same SQL as Tablebase on
 * PostgreSQL for the benchmark's three routes (same types, same pool sizes, same session
 * settings, same JSON envelope), and nothing else.
 */
import pg from 'pg';
import { typeParsers } from '../src/storage/postgres/types.js';
import { serveRaw } from './raw-routes.js';

const [url, portArg] = process.argv.slice(2);
const session = '-c TimeZone=UTC -c synchronous_commit=on';
const reads = new pg.Pool({ connectionString: url, types: typeParsers, max: 8, options: session });
const writes = new pg.Pool({ connectionString: url, types: typeParsers, max: 4, options: session });
await writes.query(
  `CREATE TABLE IF NOT EXISTS "items" ("id" TEXT COLLATE "C" NOT NULL PRIMARY KEY, "title" TEXT COLLATE "C" NOT NULL, "n" BIGINT NOT NULL DEFAULT 0, "done" BOOLEAN NOT NULL DEFAULT FALSE, "created_at" TIMESTAMPTZ(3) NOT NULL, "updated_at" TIMESTAMPTZ(3) NOT NULL)`,
);
const cols = `"id", "title", "n", "done", "created_at" AS "createdAt", "updated_at" AS "updatedAt"`;

serveRaw(Number(portArg), {
  list: async (limit) => {
    const [items, count] = await Promise.all([reads.query(`SELECT ${cols} FROM "items" ORDER BY "id" ASC LIMIT ${Math.trunc(limit)}`), reads.query('SELECT COUNT(*) AS n FROM "items"')]);
    return { items: items.rows, total: count.rows[0].n };
  },
  get: async (id) => (await reads.query(`SELECT ${cols} FROM "items" WHERE "id" = $1 ORDER BY "id" ASC LIMIT 1`, [id])).rows[0] ?? null,
  create: async (r) =>
    (await writes.query(`INSERT INTO "items" ("id", "title", "n", "done", "created_at", "updated_at") VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${cols}`, [r.id, r.title, r.n, false, r.now, r.now]))
      .rows[0],
});
