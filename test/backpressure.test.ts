/**
 * End-to-end: write backpressure (docs/reference/rules-and-hooks.md). With `TABLEBASE_MAX_PENDING_WRITES=4`, a flood of
 * writes is answered 200 or 503 WRITE_QUEUE_FULL (`Retry-After: 1`), never anything else; every
 * acknowledged row is there afterwards (also after `kill -9`), and no row of a refused request is.
 *
 * Two projects: the conformance `big` table (large `create many` bodies, as docs/reference/conformance.md intends), and
 * `test/fixtures/backpressure`, whose before-hook waits on a timer so that the writer stays busy
 * across event-loop turns and 503s are certain rather than merely possible.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pause } from './helpers/poll.js';
import { ROOT, startServer, type Reply, type TestServer } from './helpers/server.js';

const CAP = '4';

/** The only two answers a write may get under load. */
function expectAckOrFull(r: Reply, what: string): void {
  if (r.status === 200) return;
  expect(r.status, `${what}: ${r.text}`).toBe(503);
  expect(r.json.error.code).toBe('WRITE_QUEUE_FULL');
  expect(r.headers.get('retry-after')).toBe('1');
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
}

/** Counts rows of `table` whose id is in `ids` (a JSON request body: the list is long). */
async function countIds(s: TestServer, table: string, ids: string[]): Promise<number> {
  let n = 0;
  for (let i = 0; i < ids.length; i += 500) {
    const r = await s.call<{ data: number }>('GET', '/db/count', { table, where: { id: { in: ids.slice(i, i + 500) } } });
    expect(r.status, r.text).toBe(200);
    n += r.json.data;
  }
  return n;
}

const servers: TestServer[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const s of servers) await s.dispose();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('a flood of large create-many requests on the conformance `big` table', () => {
  it('answers only 200 or 503, and exactly the acknowledged rows are stored', async () => {
    const s = await startServer({ env: { TABLEBASE_MAX_PENDING_WRITES: CAP } });
    servers.push(s);
    const WORKERS = 24;
    const ROUNDS = 3;
    const ROWS = 20;
    const filler = 'x'.repeat(16 * 1024); // ~330 KB per request, under the 1 MiB body limit
    const acked: string[] = [];
    const statuses: Record<number, number> = {};
    await Promise.all(
      Array.from({ length: WORKERS }, async (_, w) => {
        for (let round = 0; round < ROUNDS; round++) {
          const objects = Array.from({ length: ROWS }, (_, i) => ({ payload: `${w}/${round}/${i} ${filler}` }));
          const r = await s.call('POST', '/db/many', { table: 'big', objects });
          statuses[r.status] = (statuses[r.status] ?? 0) + 1;
          expectAckOrFull(r, `worker ${w} round ${round}`);
          if (r.status === 200) {
            expect(r.json.data).toHaveLength(ROWS);
            acked.push(...r.json.data.map((row: { id: string }) => row.id));
          }
        }
      }),
    );
    console.log(`conformance big flood (maxPendingWrites ${CAP}): ${JSON.stringify(statuses)}`);
    expect(statuses[200] ?? 0).toBeGreaterThan(0);
    // Every acknowledged row is stored, and nothing else: a refused request wrote nothing.
    expect(await countIds(s, 'big', acked)).toBe(acked.length);
    expect((await s.get('/db/count', { table: 'big' })).json.data).toBe(acked.length);
    expect((await s.call('GET', '/health')).status).toBe(200);
    expect(s.log()).not.toMatch(/"level":50.*request failed/);
  });

  it('queued hook work refused by a full queue never changes the answer (docs/reference/rules-and-hooks.md)', async () => {
    // One create many of 12 events queues 10 audit writes at once (the cap of 10 drops 2); with
    // room for only 4 waiting writes some of those may be refused. The caller's 200 stands.
    const s = servers[0]!;
    const failedBefore = s
      .log()
      .split('\n')
      .filter((l) => l.includes('queued hook mutation failed')).length;
    const r = await s.call('POST', '/db/many', { table: 'events', objects: Array.from({ length: 12 }, (_, i) => ({ title: `bp ${i}` })) });
    expect(r.status, r.text).toBe(200);
    const ids: string[] = r.json.data.map((row: { id: string }) => row.id);
    expect(await countIds(s, 'events', ids)).toBe(12);
    // Every one of the 10 queued audit writes either landed or was logged as failed.
    const deadline = Date.now() + 20_000;
    let audits = 0;
    let failed = 0;
    for (;;) {
      audits = (await s.call<{ data: number }>('GET', '/db/count', { table: 'audit', where: { ref: { in: ids } } })).json.data;
      const lines = s
        .log()
        .split('\n')
        .filter((l) => l.includes('queued hook mutation failed'));
      failed = lines.length - failedBefore;
      if (audits + failed >= 10 || Date.now() > deadline) break;
      await pause(50);
    }
    expect(audits + failed).toBe(10);
    if (failed > 0) expect(s.log()).toMatch(/WRITE_QUEUE_FULL|queue is full/i);
    console.log(`hook work under maxPendingWrites ${CAP}: ${audits} audit rows written, ${failed} refused`);
  });
});

describe('a flood against a writer that is busy across turns (test/fixtures/backpressure)', () => {
  it('refuses with 503 + Retry-After: 1; clients that honour it get every write in, and those survive kill -9', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tb-backpressure-'));
    dirs.push(dataDir);
    const project = join(ROOT, 'test/fixtures/backpressure');
    const s = await startServer({ project, dataDir, env: { TABLEBASE_MAX_PENDING_WRITES: CAP } });
    servers.push(s);
    const WORKERS = 16;
    const WRITES = 3;
    const acked: string[] = [];
    let refused = 0;
    await Promise.all(
      Array.from({ length: WORKERS }, async (_, w) => {
        for (let i = 0; i < WRITES; i++) {
          const objects = [0, 1, 2].map((k) => ({ label: `${w}/${i}/${k}` }));
          for (let attempt = 0; ; attempt++) {
            expect(attempt, `worker ${w} write ${i} never admitted`).toBeLessThan(60);
            const r = await s.call('POST', '/db/many', { table: 'slow', objects });
            expectAckOrFull(r, `worker ${w} write ${i}`);
            if (r.status === 200) {
              acked.push(...r.json.data.map((row: { id: string }) => row.id));
              break;
            }
            refused++;
            await pause(Number(r.headers.get('retry-after')) * 1000);
          }
        }
      }),
    );
    console.log(`slow-hook flood (maxPendingWrites ${CAP}): ${acked.length / 3} writes acknowledged, ${refused} refusals`);
    // 16 writers against room for 4 waiting writes, each write holding the writer for 60 ms.
    expect(refused).toBeGreaterThan(0);
    expect(acked).toHaveLength(WORKERS * WRITES * 3);

    // kill -9 right after the last answer; a restart on the same data finds every row.
    await s.stop('SIGKILL');
    const again = await startServer({ project, dataDir, env: s.env });
    servers.push(again);
    expect(await countIds(again, 'slow', acked)).toBe(acked.length);
    expect((await again.get('/db/count', { table: 'slow' })).json.data).toBe(acked.length);
  });
});
