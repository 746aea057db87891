/**
 * `serve --workers 2` on SQLite (docs/reference/scaling.md): connections spread over both
 * workers, and /dashboard/metrics counts each request once, whichever worker served it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { bearer, type TestServer } from '../helpers/server.js';
import { signIn, startServerWithAdmin } from '../helpers/users.js';
import { openStream } from '../helpers/stream-client.js';
import { pinWorkers, workerOf, type Pinned } from './pin.js';

const ADMIN = { email: 'root@example.com', password: 'admin-pass-1234' };
let server: TestServer;
let dataDir = '';
let pins: Pinned[] = [];
beforeAll(async () => {
  ({ server, dataDir } = await startServerWithAdmin(ADMIN, { workers: 2 }));
}, 120_000);
afterAll(async () => {
  for (const p of pins) p.close();
  await server?.dispose();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

interface MetricsData {
  data: { requests: { total: number; byRoute: Record<string, number> } };
}

describe('two workers on one port', { timeout: 60_000 }, () => {
  it('spreads new connections over both workers', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const r = await fetch(`${server.base}/health`, { headers: { connection: 'close' } });
      expect(r.status).toBe(200);
      seen.add(workerOf(r.headers.get('x-request-id')));
    }
    expect(seen.size).toBe(2);
  });

  it('counts each request once in the metrics, whichever worker answered', async () => {
    pins = await pinWorkers(server, 2);
    const token = (await signIn(server, 'admins', ADMIN.email, ADMIN.password)).accessToken;
    const read = () => pins[1]!.call<MetricsData>('GET', '/dashboard/metrics', undefined, bearer(token));
    const before = (await read()).json.data.requests;
    // 3 reads through each worker, 2 writes through each (forwarded to the primary).
    for (const p of pins) {
      for (let i = 0; i < 3; i++) expect((await p.get('/db/count', { table: 'events' })).status).toBe(200);
      for (let i = 0; i < 2; i++) expect((await p.call('POST', '/db', { table: 'events', object: { title: `m${i}` } })).status).toBe(200);
    }
    const after = (await read()).json.data.requests;
    // The first metrics read is counted too (it was answered before the second one started).
    expect(after.total - before.total).toBe(6 + 4 + 1);
    expect((after.byRoute['GET /db/count'] ?? 0) - (before.byRoute['GET /db/count'] ?? 0)).toBe(6);
    expect((after.byRoute['POST /db'] ?? 0) - (before.byRoute['POST /db'] ?? 0)).toBe(4);
  });

  it('shows per-process figures on the dashboard: the primary and each worker', async () => {
    const token = (await signIn(server, 'admins', ADMIN.email, ADMIN.password)).accessToken;
    const pinned = await pinWorkers(server, 2);
    const stream = await openStream(server.base, '/db/stream/count', { table: 'tasks' });
    await stream.next();
    try {
      // Requests through each worker, writes forwarded to the primary.
      for (const p of pinned) {
        for (let i = 0; i < 4; i++) expect((await p.get('/db/count', { table: 'events' })).status).toBe(200);
        expect((await p.call('POST', '/db', { table: 'events', object: { title: 'per-process' } })).status).toBe(200);
      }
      await new Promise((r) => setTimeout(r, 1100)); // a complete second behind the requests/s window
      type Row = { role: string; id: number; pid: number; requestsPerSecond: number; streams: number; memory: { rssBytes: number; heapUsedBytes: number }; eventLoopDelayMs: { p99: number } };
      // A worker that does not answer the gathering within 1 s (a loaded machine) is missing from that reading.
      const read = () => server.call<{ data: { processes: Row[]; streams: { open: number } } }>('GET', '/dashboard/metrics', undefined, bearer(token));
      let r = await read();
      for (let i = 0; i < 5 && r.status === 200 && r.json.data.processes.length < 3; i++) r = await read();
      expect(r.status, r.text).toBe(200);
      const rows = r.json.data.processes;
      expect(rows.map((p) => p.role)).toEqual(['primary', 'worker', 'worker']);
      expect(new Set(rows.map((p) => p.pid)).size).toBe(3);
      expect(rows[1]!.id).toBeLessThan(rows[2]!.id);
      for (const p of rows) {
        expect(p.memory.rssBytes).toBeGreaterThan(p.memory.heapUsedBytes);
        expect(p.eventLoopDelayMs.p99).toBeGreaterThanOrEqual(0);
      }
      // Each worker took its 5 requests (and more: the sign-in, the pins' health checks); the primary ran the forwarded writes.
      for (const p of rows) expect(p.requestsPerSecond).toBeGreaterThan(0);
      // The stream lives in one worker; the rows add up to the server's total.
      expect(rows.reduce((n, p) => n + p.streams, 0)).toBe(r.json.data.streams.open);
      expect(rows.filter((p) => p.role === 'worker' && p.streams >= 1)).toHaveLength(1);
      const text = await server.call('GET', '/dashboard/metrics', undefined, { ...bearer(token), accept: 'text/plain' });
      expect(text.text).toMatch(/^tablebase_process_resident_memory_bytes\{process="primary"\} \d+$/m);
      expect(text.text).toMatch(new RegExp(`^tablebase_process_requests_per_second\\{process="worker ${rows[1]!.id}"\\} [\\d.]+$`, 'm'));
    } finally {
      stream.close();
      for (const p of pinned) p.close();
    }
  });

  it('shows the streams of every worker on the dashboard', async () => {
    const token = (await signIn(server, 'admins', ADMIN.email, ADMIN.password)).accessToken;
    const streams = [];
    const workers = new Set<string>();
    for (let i = 0; i < 20 && workers.size < 2; i++) {
      const s = await openStream(server.base, '/db/stream/count', { table: 'tasks' });
      await s.next();
      workers.add(workerOf(s.headers['x-request-id'] as string));
      streams.push(s);
    }
    try {
      const live = await server.call<{ data: { open: number; streams: { route: string; table: string; open: number }[] } }>('GET', '/dashboard/live', undefined, bearer(token));
      expect(live.status, live.text).toBe(200);
      expect(live.json.data.open).toBe(streams.length);
      expect(live.json.data.streams).toContainEqual({ route: 'GET /db/stream/count', table: 'tasks', open: streams.length });
    } finally {
      for (const s of streams) s.close();
    }
  });
});
