/**
 * The request log of `serve --workers` (docs/scaling.md): every request gets exactly one log
 * line across the process tree, with its status. A forwarded write's line is written by the
 * worker that holds the client (the primary, the one writer, writes none); a read's by the
 * worker that served it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { pinWorkers, type Pinned } from './pin.js';

let server: TestServer;
let pins: Pinned[] = [];
beforeAll(async () => {
  server = await startServer({ workers: 2, env: { LOG_LEVEL: 'info', LOG_FORMAT: 'json' } });
  pins = await pinWorkers(server, 2);
}, 120_000);
afterAll(async () => {
  for (const p of pins) p.close();
  await server?.dispose();
});

interface Line {
  msg?: string;
  requestId?: string;
  status?: number;
  method?: string;
  path?: string;
  route?: string;
  ms?: number;
}

/** The server's JSON log lines so far (every process writes to the same stdout). */
function lines(): Line[] {
  return server
    .log()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);
}

/** The `request` lines of one request id. */
const requestLines = (id: string) => lines().filter((l) => l.msg === 'request' && l.requestId === id);

/**
 * Waits until `marker`'s own line is in the output. Whatever another process wrote for an earlier
 * request is in it by then: the primary would write a forwarded request's line before its answer
 * left, so before the client had it and sent the marker; the pipe keeps the order of the writes.
 */
async function settle(p: Pinned, marker: string): Promise<void> {
  expect((await p.call('GET', '/health', undefined, { 'x-request-id': marker })).status).toBe(200);
  for (let i = 0; i < 200 && requestLines(marker).length === 0; i++) await new Promise((r) => setTimeout(r, 25));
  expect(requestLines(marker)).toHaveLength(1);
}

describe('serve --workers 2: one request log line per request', { timeout: 60_000 }, () => {
  it('a forwarded write is logged once, with its status, method, path and route', async () => {
    for (const [i, p] of pins.entries()) {
      const ok = await p.call('POST', '/db?x=1', { table: 'events', object: { title: 'logged' } }, { 'x-request-id': `log-create-${i}` });
      expect(ok.status).toBe(200);
      const bad = await p.call('POST', '/db', { table: 'events', object: { nope: 1 } }, { 'x-request-id': `log-bad-${i}` });
      expect(bad.status).toBe(400);
      await settle(p, `log-marker-w-${i}`);
      const created = requestLines(`log-create-${i}`);
      expect(created).toHaveLength(1);
      // The query string is never logged (it can carry a body).
      expect(created[0]).toMatchObject({ status: 200, method: 'POST', path: '/db', route: 'POST /db' });
      expect(typeof created[0]!.ms).toBe('number');
      expect(requestLines(`log-bad-${i}`)).toEqual([expect.objectContaining({ status: 400, method: 'POST', path: '/db' })]);
    }
  });

  it('a read served by a worker is logged once', async () => {
    const p = pins[0]!;
    expect((await p.get('/db/count', { table: 'events' }, { 'x-request-id': 'log-read' })).status).toBe(200);
    await settle(p, 'log-marker-r');
    expect(requestLines('log-read')).toEqual([expect.objectContaining({ status: 200, method: 'GET', path: '/db/count', route: 'GET /db/count' })]);
  });
});
