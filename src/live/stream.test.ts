import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../core/errors.js';
import { createLiveEngine, type LiveEngine } from './engine.js';
import { FakeDb, waitFor } from './fake-db.js';
import { responseSink } from '../http/sink.js';
import { startLiveStream } from './stream.js';
import { insert, query, task, TASKS } from './test-fixtures.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A stream-count route as the HTTP layer would wire it: caps answer an ordinary JSON 429. */
async function serve(engine: LiveEngine, db: FakeDb) {
  const server = createServer(async (req, res) => {
    const q = query('count', TASKS, { ownerId: { eq: 'a' } });
    const since = engine.version;
    const initial = await db.run(q);
    try {
      startLiveStream(engine, responseSink(req, res), { accept: req.headers.accept, query: q, initial, since, ip: req.socket.remoteAddress ?? '' });
    } catch (err) {
      const e = err instanceof ApiError ? err : new ApiError('INTERNAL');
      res.writeHead(e.status, { 'Content-Type': 'application/json', ...e.headers });
      res.end(JSON.stringify(e.toJSON()));
    }
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

function get(port: number, accept?: string) {
  const got = { body: '', status: 0, type: '', res: undefined as IncomingMessage | undefined, destroy: () => {} };
  const req = request({ host: '127.0.0.1', port, path: '/db/stream/count', headers: accept ? { Accept: accept } : {} }, (res) => {
    got.res = res;
    got.status = res.statusCode ?? 0;
    got.type = String(res.headers['content-type']);
    res.setEncoding('utf8');
    res.on('data', (c: string) => (got.body += c));
    res.on('error', () => {});
  });
  req.on('error', () => {});
  req.end();
  got.destroy = () => req.destroy();
  return got;
}

describe('startLiveStream', () => {
  it('sends the first payload, pushes changes, and releases the stream on disconnect', async () => {
    const db = new FakeDb();
    const engine = createLiveEngine({ run: db.run });
    db.engine = engine;
    const port = await serve(engine, db);
    const client = get(port, 'application/x-ndjson');
    await waitFor(() => client.body === '{"data":0}\n', 'the first payload');
    expect(client.type).toBe('application/x-ndjson');
    expect(engine.stats().open).toBe(1);
    db.apply(insert(task({ ownerId: 'a' })));
    await waitFor(() => client.body === '{"data":0}\n{"data":1}\n', 'the pushed change');
    client.destroy();
    await waitFor(() => engine.stats().open === 0, 'the stream to be released');
    expect(engine.stats().queries).toBe(0);
  });

  it('answers a JSON 429 before the stream starts when the per-IP cap is reached', async () => {
    const db = new FakeDb();
    const engine = createLiveEngine({ run: db.run, maxPerIp: 1 });
    db.engine = engine;
    const port = await serve(engine, db);
    const first = get(port);
    await waitFor(() => first.body.startsWith('id: 1\ndata: {"data":0}\n\n'), 'the first stream');
    const second = get(port);
    await waitFor(() => second.status !== 0 && second.body.length > 0, 'the refusal');
    expect(second.status).toBe(429);
    expect(second.type).toBe('application/json');
    expect(JSON.parse(second.body)).toEqual({ error: { code: 'RATE_LIMITED', message: 'Too many open streams' } });
    expect(engine.stats().open).toBe(1);
  });

  it('a failing check sends one error event and ends the response', async () => {
    const db = new FakeDb();
    const engine = createLiveEngine({ run: db.run });
    db.engine = engine;
    const server = createServer(async (req, res) => {
      const q = query('list', TASKS, {});
      startLiveStream(engine, responseSink(req, res), {
        accept: req.headers.accept,
        query: q,
        initial: await db.run(q),
        since: engine.version,
        ip: 'x',
        check: async (d) => ((d as { total: number }).total > 0 ? new ApiError('FORBIDDEN') : null),
      });
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const denied = get(port);
    await waitFor(() => denied.body.includes('data: {"data":{"items":[],"total":0}}'), 'the first payload');
    let ended = false;
    denied.res!.on('end', () => (ended = true));
    db.apply(insert(task()));
    await waitFor(() => ended, 'the stream to end');
    expect(denied.body).toBe('id: 1\ndata: {"data":{"items":[],"total":0}}\n\nevent: error\ndata: {"error":{"code":"FORBIDDEN","message":"Forbidden"}}\n\n');
    expect(engine.stats().open).toBe(0);
  });

  it('engine.close() ends every open response cleanly', async () => {
    const db = new FakeDb();
    const engine = createLiveEngine({ run: db.run });
    db.engine = engine;
    const port = await serve(engine, db);
    const clients = [get(port), get(port, 'application/x-ndjson')];
    await waitFor(() => clients.every((c) => c.body.length > 0), 'first payloads');
    const ended = clients.map(() => false);
    clients.forEach((c, i) => c.res!.on('end', () => (ended[i] = true)));
    engine.close();
    await waitFor(() => ended.every(Boolean), 'the responses to end');
    expect(clients[1]!.body).toBe('{"data":0}\n');
    expect(engine.stats().open).toBe(0);
  });
});
