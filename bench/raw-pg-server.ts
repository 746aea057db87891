/**
 * The PostgreSQL baseline: a raw node:http + pg server running the same SQL as Tablebase on
 * PostgreSQL for the benchmark's three routes (same types, same pool sizes, same session
 * settings, same JSON envelope), and nothing else.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import pg from 'pg';
import { typeParsers } from '../src/storage/postgres/types.js';

const [url, portArg] = process.argv.slice(2);
const session = '-c TimeZone=UTC -c synchronous_commit=on';
const reads = new pg.Pool({ connectionString: url, types: typeParsers, max: 8, options: session });
const writes = new pg.Pool({ connectionString: url, types: typeParsers, max: 4, options: session });
await writes.query(
  `CREATE TABLE IF NOT EXISTS "items" ("id" TEXT COLLATE "C" NOT NULL PRIMARY KEY, "title" TEXT COLLATE "C" NOT NULL, "n" BIGINT NOT NULL DEFAULT 0, "done" BOOLEAN NOT NULL DEFAULT FALSE, "created_at" TIMESTAMPTZ(3) NOT NULL, "updated_at" TIMESTAMPTZ(3) NOT NULL)`,
);
const cols = `"id", "title", "n", "done", "created_at" AS "createdAt", "updated_at" AS "updatedAt"`;
let seq = 0;

const send = (res: any, body: string) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
};
const fail = (res: any) => () => {
  res.writeHead(500);
  res.end();
};

createServer((req, res) => {
  const url = req.url!;
  if (url.startsWith('/db/list')) {
    const body = JSON.parse(new URLSearchParams(url.slice(url.indexOf('?') + 1)).get('body')!);
    Promise.all([reads.query(`SELECT ${cols} FROM "items" ORDER BY "id" ASC LIMIT ${Math.trunc(body.limit)}`), reads.query('SELECT COUNT(*) AS n FROM "items"')]).then(
      ([items, count]) => send(res, JSON.stringify({ data: { items: items.rows, total: count.rows[0].n } })),
      fail(res),
    );
  } else if (req.method === 'GET' && url.startsWith('/db?')) {
    const body = JSON.parse(new URLSearchParams(url.slice(url.indexOf('?') + 1)).get('body')!);
    reads.query(`SELECT ${cols} FROM "items" WHERE "id" = $1 ORDER BY "id" ASC LIMIT 1`, [body.where.id.eq]).then((r) => send(res, JSON.stringify({ data: r.rows[0] ?? null })), fail(res));
  } else if (req.method === 'POST') {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString());
      const now = new Date().toISOString();
      const id = `it_${Date.now().toString(36)}${(seq++).toString(36)}${randomBytes(4).toString('hex')}`;
      writes
        .query(`INSERT INTO "items" ("id", "title", "n", "done", "created_at", "updated_at") VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${cols}`, [
          id,
          body.object.title,
          body.object.n ?? 0,
          false,
          now,
          now,
        ])
        .then((r) => send(res, JSON.stringify({ data: r.rows[0] })), fail(res));
    });
  } else if (url === '/health') send(res, '{"data":{"status":"ok"}}');
  else {
    res.writeHead(404);
    res.end();
  }
}).listen(Number(portArg), '127.0.0.1');
