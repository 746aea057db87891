/**
 * The baseline: a raw node:http + better-sqlite3 server doing the same SQL as Tablebase for the
 * benchmark's three routes (same pragmas, same JSON envelope), and nothing else.
 */
import Database from 'better-sqlite3';
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';

const [file, portArg] = process.argv.slice(2);
const db = new Database(file!);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec(
  `CREATE TABLE IF NOT EXISTS items (id TEXT PRIMARY KEY, title TEXT NOT NULL, n INTEGER NOT NULL DEFAULT 0, done INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`,
);
const cols = `id, title, n, done, created_at AS createdAt, updated_at AS updatedAt`;
// LIMIT as a literal, as Tablebase writes it: a bound LIMIT is measurably slower in SQLite.
const lists = new Map<number, Database.Statement>();
const list = (limit: number) => {
  let s = lists.get(limit);
  if (!s) lists.set(limit, (s = db.prepare(`SELECT ${cols} FROM items ORDER BY id ASC LIMIT ${Math.trunc(limit)}`)));
  return s;
};
const count = db.prepare('SELECT COUNT(*) AS n FROM items');
const get = db.prepare(`SELECT ${cols} FROM items WHERE id = ? ORDER BY id ASC LIMIT 1`);
const insert = db.prepare(`INSERT INTO items (id, title, n, done, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING ${cols}`);
const fix = (r: any) => ((r.done = r.done === 1), r);
let seq = 0;

const send = (res: any, body: string) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
};

createServer((req, res) => {
  const url = req.url!;
  if (url.startsWith('/db/list')) {
    const body = JSON.parse(new URLSearchParams(url.slice(url.indexOf('?') + 1)).get('body')!);
    send(res, JSON.stringify({ data: { items: list(body.limit).all().map(fix), total: (count.get() as any).n } }));
  } else if (req.method === 'GET' && url.startsWith('/db?')) {
    const body = JSON.parse(new URLSearchParams(url.slice(url.indexOf('?') + 1)).get('body')!);
    send(res, JSON.stringify({ data: fix(get.get(body.where.id.eq)) }));
  } else if (req.method === 'POST') {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString());
      const now = new Date().toISOString();
      const id = `it_${Date.now().toString(36)}${(seq++).toString(36)}${randomBytes(4).toString('hex')}`;
      send(res, JSON.stringify({ data: fix(insert.get(id, body.object.title, body.object.n ?? 0, 0, now, now)) }));
    });
  } else if (url === '/health') send(res, '{"data":{"status":"ok"}}');
  else {
    res.writeHead(404);
    res.end();
  }
}).listen(Number(portArg), '127.0.0.1');
