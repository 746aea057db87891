/**
 * The baseline: a raw node:http + better-sqlite3 server doing the same SQL as Tablebase for the
 * benchmark's three routes (same pragmas, same JSON envelope), and nothing else.
 *
 * RAW_WORKERS=n (reads only): n node:cluster workers on the one port, accepted round-robin by the
 * primary as `serve --workers n` is, each with its own connection. What n processes of the leanest
 * Node server gain over one on this machine, with the load generator beside them: the control for
 * Tablebase's own 2 workers / 1 worker (bench/workers.ts). Its creates would be n writers.
 */
import cluster from 'node:cluster';
import Database from 'better-sqlite3';
import { serveRaw } from './raw-routes.js';

const [file, portArg] = process.argv.slice(2);
const workers = Math.max(1, Number(process.env.RAW_WORKERS ?? 1));
const db = new Database(file!);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
// Several processes: a seed's write may meet another process's read lock on the WAL index.
db.pragma('busy_timeout = 5000');
db.exec(
  `CREATE TABLE IF NOT EXISTS items (id TEXT PRIMARY KEY, title TEXT NOT NULL, n INTEGER NOT NULL DEFAULT 0, done INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`,
);
if (workers > 1 && cluster.isPrimary) {
  db.close();
  for (let i = 0; i < workers; i++) cluster.fork();
  // A worker gone means a broken baseline: end the whole server (the bench reports the failed start or run).
  cluster.on('exit', () => process.exit(1));
} else {
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
  /** SQLite stores `done` as 0/1; the API answers a boolean. */
  const fix = (r: unknown) => {
    const row = r as { done: unknown };
    row.done = row.done === 1;
    return row;
  };

  serveRaw(Number(portArg), {
    list: (limit) => ({ items: list(limit).all().map(fix), total: (count.get() as { n: number }).n }),
    get: (id) => fix(get.get(id)),
    create: (r) => fix(insert.get(r.id, r.title, r.n, 0, r.now, r.now)),
  });
}
