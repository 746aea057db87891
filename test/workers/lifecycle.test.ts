/**
 * The life of `serve --workers 2`: a killed worker is replaced and no answered write is lost;
 * SIGTERM drains everything and exits 0 with no process left; `kill -9` of the primary takes
 * every worker with it (no orphan keeps the port).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { pause, until } from '../helpers/poll.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { openStream } from '../helpers/stream-client.js';
import { alive, workerPids } from './pin.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.dispose();
  server = undefined;
});

const twoWorkers = async (s: TestServer) =>
  until(
    async () => workerPids(s),
    (p) => p.length === 2,
    'two workers',
    30_000,
    50,
  );

describe('worker lifecycle', { timeout: 120_000 }, () => {
  it('replaces a killed worker and loses no answered write', async () => {
    server = await startServer({ workers: 2 });
    const s = server;
    const [victim] = await twoWorkers(s);
    const answered: string[] = [];
    let writing = true;
    // Four clients write on their own connections while a worker dies under them.
    const writers = Array.from({ length: 4 }, async (_, c) => {
      for (let i = 0; writing; i++) {
        try {
          const r = await fetch(`${s.base}/db`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', connection: 'close' },
            // A connection node:cluster was handing to the worker as it died is never answered (nor claimed).
            signal: AbortSignal.timeout(5000),
            body: JSON.stringify({ table: 'events', object: { title: `k${c}-${i}` } }),
          });
          const j = (await r.json()) as { data?: { id: string } };
          if (r.status === 200 && j.data) answered.push(j.data.id);
        } catch {
          /* the connection died with its worker: not answered, so not claimed */
        }
      }
    });
    await until(
      async () => answered.length,
      (n) => n >= 20,
      'writes before the kill',
      30_000,
      20,
    );
    process.kill(victim!, 'SIGKILL');
    const replaced = await until(
      async () => workerPids(s),
      (p) => p.length === 2 && !p.includes(victim!),
      'a replacement worker',
      30_000,
      20,
    );
    expect(replaced).not.toContain(victim);
    await until(
      async () => answered.length,
      (n) => n >= 60,
      'writes after the kill',
      30_000,
      20,
    );
    writing = false;
    await Promise.all(writers);
    const found = await s.get<{ data: { items: { id: string }[] } }>('/db/list', { table: 'events', limit: 1000 });
    const stored = new Set(found.json.data.items.map((r) => r.id));
    expect(answered.filter((id) => !stored.has(id))).toEqual([]);
  });

  it('SIGTERM drains, exits 0 and leaves no process', async () => {
    server = await startServer({ workers: 2 });
    const s = server;
    const pids = await twoWorkers(s);
    const stream = await openStream(s.base, '/db/stream/count', { table: 'events' });
    await stream.next();
    const write = s.call('POST', '/db', { table: 'events', object: { title: 'last' } });
    expect((await write).status).toBe(200);
    expect(await s.stop('SIGTERM')).toBe(0);
    await stream.whenEnded(10_000);
    for (const pid of pids)
      await until(
        async () => alive(pid),
        (a) => !a,
        `worker ${pid} gone`,
        5000,
        20,
      );
  });

  it('kill -9 of the primary takes every worker with it', async () => {
    server = await startServer({ workers: 2 });
    const s = server;
    const pids = await twoWorkers(s);
    s.proc.kill('SIGKILL');
    const started = Date.now();
    for (const pid of pids)
      await until(
        async () => alive(pid),
        (a) => !a,
        `worker ${pid} gone`,
        5000,
        10,
      );
    // Budget one second (docs/reference/scaling.md); asserted loosely, the machine is shared.
    expect(Date.now() - started).toBeLessThan(5000);
    await pause(10);
  });
});
