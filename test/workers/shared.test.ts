/**
 * What workers of one server share through the primary: exact rate limits, revocations (refused
 * by every worker right after the logout answer), and cron (each tick once).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pause, until } from '../helpers/poll.js';
import { bearer, startServer, type TestServer } from '../helpers/server.js';
import { pinWorkers, type Pinned } from './pin.js';

let server: TestServer;
let pins: Pinned[] = [];
beforeAll(async () => {
  server = await startServer({ workers: 2 });
  pins = await pinWorkers(server, 2);
}, 120_000);
afterAll(async () => {
  for (const p of pins) p.close();
  await server?.dispose();
});

describe('shared across workers', { timeout: 60_000 }, () => {
  it('counts a client’s rate limit exactly over both workers', async () => {
    const [a, b] = pins as [Pinned, Pinned];
    const statuses = [];
    for (const p of [a, b, a, b, a]) statuses.push((await p.get('/db/count', { table: 'limited' })).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
  });

  it('refuses a logged-out token on every worker', async () => {
    const [a, b] = pins as [Pinned, Pinned];
    const email = `r${Date.now()}@example.com`;
    const up = await a.call('POST', '/auth/sign-up', { type: 'signUp', table: 'users', email, password: 'workers-pass-1' });
    expect(up.status, up.text).toBe(200);
    const { accessToken, user } = up.json.data;
    const own = (p: Pinned) => p.get('/db', { table: 'users', where: { id: { eq: user.id } } }, bearer(accessToken));
    expect((await own(a)).status).toBe(200);
    expect((await own(b)).status).toBe(200);
    expect((await b.call('POST', '/auth/logout', undefined, bearer(accessToken))).status).toBe(204);
    const started = Date.now();
    for (const p of [a, b])
      await until(
        () => own(p),
        (r) => r.status === 401,
        'the worker refuses the token',
        1000,
        5,
      );
    // Budget 100 ms (docs/reference/scaling.md); asserted loosely, the bench machine is shared.
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('runs each cron tick once', async () => {
    // The conformance heartbeat runs every 2 s; only the primary schedules it.
    await pause(6500);
    const r = await pins[0]!.get<{ data: { items: { createdAt: string }[] } }>('/db/list', { table: 'cron_log', limit: 1000, order_by: [{ column: 'createdAt' }] });
    expect(r.status, r.text).toBe(200);
    const ticks = r.json.data.items.map((x) => Math.floor(Date.parse(x.createdAt) / 2000));
    expect(ticks.length).toBeGreaterThanOrEqual(3);
    expect(new Set(ticks).size).toBe(ticks.length);
  });
});
