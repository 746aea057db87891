/**
 * Stream caps count the whole server with `serve --workers 2`: the per-IP cap of 3 admits three
 * streams however they spread over the workers, refuses the fourth with 429, and admits again
 * once one closed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/poll.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { openStream, type StreamClient } from '../helpers/stream-client.js';
import { workerOf } from './pin.js';

let server: TestServer;
const open: StreamClient[] = [];
beforeAll(async () => {
  server = await startServer({ workers: 2, env: { TABLEBASE_MAX_STREAMS_PER_IP: '3' } });
}, 120_000);
afterAll(async () => {
  for (const s of open) s.close();
  await server?.dispose();
});

describe('stream caps across workers', { timeout: 60_000 }, () => {
  it('admits the cap over both workers, refuses one more, admits again after a close', async () => {
    const body = { table: 'events' };
    const workers = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const s = await openStream(server.base, '/db/stream/count', body);
      expect(s.status).toBe(200);
      await s.next();
      workers.add(workerOf(s.headers['x-request-id'] as string));
      open.push(s);
    }
    expect(workers.size).toBe(2); // round-robin: the three streams sit on both workers
    for (let i = 0; i < 2; i++) {
      const refused = await openStream(server.base, '/db/stream/count', body);
      await refused.whenEnded();
      expect(refused.status).toBe(429);
    }
    open.shift()!.close();
    const again = await until(
      async () => {
        const s = await openStream(server.base, '/db/stream/count', body);
        if (s.status !== 200) await s.whenEnded();
        return s;
      },
      (s) => s.status === 200,
      'a place once a stream closed',
      10_000,
      100,
    );
    open.push(again);
  });
});
