/**
 * `serve --workers 2` on SQLite: a write answered through one worker reaches the matching
 * streams on the other (the committed rows cross over IPC and are matched in memory).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type Envelope, type TestServer } from '../helpers/server.js';
import { openStream, type StreamClient } from '../helpers/stream-client.js';
import { pinWorkers, workerOf, type Pinned } from './pin.js';

let server: TestServer;
let pins: Pinned[] = [];
const streams: StreamClient[] = [];
beforeAll(async () => {
  server = await startServer({ workers: 2 });
  pins = await pinWorkers(server, 2);
}, 120_000);
afterAll(async () => {
  for (const s of streams) s.close();
  for (const p of pins) p.close();
  await server?.dispose();
});

const ids = (f: { json: Envelope }) => f.json.data.items.map((r) => r.id);

/** A list stream on each worker: new connections until both workers hold one. */
async function streamOnEachWorker(body: unknown): Promise<Map<string, StreamClient>> {
  const byWorker = new Map<string, StreamClient>();
  for (let i = 0; i < 40 && byWorker.size < 2; i++) {
    const s = await openStream(server.base, '/db/stream/list', body);
    const w = workerOf(s.headers['x-request-id'] as string);
    if (byWorker.has(w)) {
      s.close();
      continue;
    }
    byWorker.set(w, s);
    streams.push(s);
  }
  expect(byWorker.size).toBe(2);
  return byWorker;
}

describe('live queries across workers', { timeout: 60_000 }, () => {
  it('a write through either worker reaches the streams on both', async () => {
    const t = `w${Date.now()}`;
    const byWorker = await streamOnEachWorker({ table: 'events', where: { title: { startsWith: t } } });
    for (const s of byWorker.values()) expect(ids(await s.next())).toEqual([]);
    const [a, b] = pins as [Pinned, Pinned];
    const first = await a.call('POST', '/db', { table: 'events', object: { title: `${t}-1` } });
    expect(first.status, first.text).toBe(200);
    for (const s of byWorker.values()) expect(ids(await s.next(10_000))).toEqual([first.json.data.id]);
    const second = await b.call('POST', '/db', { table: 'events', object: { title: `${t}-2` } });
    expect(second.status, second.text).toBe(200);
    for (const s of byWorker.values()) expect(ids(await s.nextWhere((f) => ids(f).length === 2, 10_000))).toEqual([first.json.data.id, second.json.data.id]);
    // An update that moves a row out of the query reaches both too (before image matched in memory).
    const moved = await b.call('PATCH', '/db', { table: 'events', where: { id: { eq: first.json.data.id } }, updates: [{ column: 'title', value: 'elsewhere' }] });
    expect(moved.status, moved.text).toBe(200);
    for (const s of byWorker.values()) expect(ids(await s.nextWhere((f) => ids(f).length === 1, 10_000))).toEqual([second.json.data.id]);
  });
});
