/**
 * The routing every raw baseline server shares (bench/raw-server.ts on SQLite, raw-pg-server.ts on
 * PostgreSQL): the benchmark's three routes with Tablebase's JSON envelope, and nothing else, so
 * the baselines differ only in their database calls.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';

export interface RawHandlers {
  list(limit: number): unknown;
  get(id: string): unknown;
  create(row: { id: string; title: string; n: number; now: string }): unknown;
}

const send = (res: ServerResponse, body: string) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
};

/** Answers `data` once it resolves (sync handlers answer at once); a failure is a bare 500. */
function answer(res: ServerResponse, data: unknown): void {
  const ok = (d: unknown) => send(res, JSON.stringify({ data: d }));
  if (data instanceof Promise)
    data.then(ok, () => {
      res.writeHead(500);
      res.end();
    });
  else ok(data);
}

const bodyOf = (url: string) => JSON.parse(new URLSearchParams(url.slice(url.indexOf('?') + 1)).get('body')!);

export function serveRaw(port: number, h: RawHandlers): void {
  let seq = 0;
  createServer((req, res) => {
    const url = req.url!;
    if (url.startsWith('/db/list')) answer(res, h.list(bodyOf(url).limit));
    else if (req.method === 'GET' && url.startsWith('/db?')) answer(res, h.get(bodyOf(url).where.id.eq));
    else if (req.method === 'POST') {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString());
        const id = `it_${Date.now().toString(36)}${(seq++).toString(36)}${randomBytes(4).toString('hex')}`;
        answer(res, h.create({ id, title: body.object.title, n: body.object.n ?? 0, now: new Date().toISOString() }));
      });
    } else if (url === '/health') send(res, '{"data":{"status":"ok"}}');
    else {
      res.writeHead(404);
      res.end();
    }
  }).listen(port, '127.0.0.1');
}
