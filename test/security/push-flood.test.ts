/**
 * Issue #26 item 3: push cannot be flooded.
 *
 * - One user with many hanging endpoints (20,000 queued deliveries) stalled every other user's
 *   push: the worker took the oldest due rows first, all of them the flooder's. Now each user
 *   holds at most a quarter of a provider's slots, so another user's message goes out while the
 *   flooder's sends hang (here: at once; at worst one request timeout, 10 s).
 * - Pending deliveries are capped per user (`ctx.push.send` throws RATE_LIMITED, catchable).
 * - Web Push endpoints on loopback, private, link-local or metadata addresses are refused at
 *   registration unless PUSH_WEB_ENDPOINT_HOSTS names them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compileProject } from '../../src/core/model.js';
import { defineProject } from '../../src/define/project.js';
import type { Outcome, PushPayload, PushProvider } from '../../src/push/provider.js';
import { pushInternalTables } from '../../src/push/schema.js';
import { PushQueueFull, pushStore } from '../../src/push/store.js';
import { DeliveryWorker } from '../../src/push/worker.js';
import { newId } from '../../src/storage/ids.js';
import { autoMigrate } from '../../src/storage/migrations/index.js';
import { openSqlite, type SqliteDriver } from '../../src/storage/sqlite/driver.js';
import { WriteQueue } from '../../src/storage/writer.js';
import { startPushWorld, type PushWorld } from '../helpers/push.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { signUp, uniqueEmail } from '../helpers/users.js';

/** An FCM stand-in: tokens starting `hang` never answer (until the test ends), the others at once. */
class SplitProvider implements PushProvider {
  readonly platform = 'fcm' as const;
  readonly concurrency = 8;
  readonly delivered: string[] = [];
  readonly hanging: ((o: Outcome) => void)[] = [];
  send(target: string, payload: PushPayload): Promise<Outcome> {
    if (target.startsWith('hang')) return new Promise((resolve) => this.hanging.push(resolve));
    this.delivered.push(`${target}:${payload.title}`);
    return Promise.resolve({ kind: 'sent' });
  }
  async close() {
    for (const r of this.hanging.splice(0)) r({ kind: 'retry', reason: 'closed' });
  }
}

const silent = { info() {}, warn() {}, error() {}, debug() {} };
let dir: string;
let driver: SqliteDriver;
let writer: WriteQueue;
const store = () => pushStore(driver.dialect);

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tb-pushflood-'));
  driver = openSqlite(join(dir, 'db.sqlite'));
  const model = compileProject(defineProject({ tables: [] }), [...pushInternalTables]);
  await autoMigrate({ driver, model, dialect: driver.dialect, dir: join(dir, 'm'), allowDestructive: true, name: 'push_flood_test' });
  writer = new WriteQueue(driver);
});
afterEach(async () => {
  await writer.whenIdle();
  await driver.close();
  rmSync(dir, { recursive: true, force: true });
});

const message = (title: string, now = Date.now()) => ({ payload: JSON.stringify({ title, body: 'b' }), now, expiresAt: now + 600_000, newId: () => newId('pq') });

describe('push scheduling is fair across users (issue #26)', () => {
  it("a flooder's 100 hanging devices and 2,000 queued deliveries do not delay another user's push", async () => {
    const s = store();
    const now = new Date().toISOString();
    await writer.submit(async (tx) => {
      for (let i = 0; i < 100; i++) await s.register(tx, { id: newId('pd'), platform: 'fcm', token: `hang-${i}`, subscription: null, userId: 'us_flooder', now, maxPerUser: 100 });
      await s.register(tx, { id: newId('pd'), platform: 'fcm', token: 'victim-phone', subscription: null, userId: 'us_victim', now, maxPerUser: 100 });
      for (let k = 0; k < 20; k++) await s.enqueue(tx, ['us_flooder'], message(`flood ${k}`), { perUser: 100_000, total: 100_000 });
    });
    const provider = new SplitProvider();
    const worker = new DeliveryWorker({
      store: s,
      providers: new Map([['fcm', provider]]),
      write: (fn) => writer.submit((tx) => fn(tx)),
      reader: driver,
      log: silent,
      maxAttempts: 5,
      retryBaseMs: 1000,
      pollMs: 20,
      releaseAtStart: false,
    });
    await worker.start();
    try {
      // The flooder's sends now hold their share of the slots, and will hang.
      for (let i = 0; i < 100 && provider.hanging.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
      await writer.submit((tx) => s.enqueue(tx, ['us_victim'], message('hello victim'), { perUser: 1000, total: 100_000 }));
      worker.wake();
      for (let i = 0; i < 300 && provider.delivered.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(provider.delivered).toEqual(['victim-phone:hello victim']);
      // No user holds more than a quarter of the slots.
      expect(provider.hanging.length).toBeLessThanOrEqual(2);
    } finally {
      await worker.stop(0);
    }
  }, 30_000);
});

describe('pending deliveries are capped (issue #26)', () => {
  it('past the per-user cap, enqueue throws RATE_LIMITED and queues nothing; other users still queue', async () => {
    const s = store();
    const now = new Date().toISOString();
    await writer.submit(async (tx) => {
      for (let i = 0; i < 10; i++) await s.register(tx, { id: newId('pd'), platform: 'fcm', token: `t-${i}`, subscription: null, userId: 'us_a', now, maxPerUser: 100 });
      await s.register(tx, { id: newId('pd'), platform: 'fcm', token: 'b', subscription: null, userId: 'us_b', now, maxPerUser: 100 });
    });
    const caps = { perUser: 25, total: 1000 };
    expect(await writer.submit((tx) => s.enqueue(tx, ['us_a'], message('1'), caps))).toBe(10);
    expect(await writer.submit((tx) => s.enqueue(tx, ['us_a'], message('2'), caps))).toBe(10);
    const refused = await writer.submit((tx) => s.enqueue(tx, ['us_a'], message('3'), caps)).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PushQueueFull);
    expect(refused).toMatchObject({ code: 'RATE_LIMITED', status: 429 });
    expect(await s.pending(driver)).toBe(20);
    expect(await writer.submit((tx) => s.enqueue(tx, ['us_b'], message('b'), caps))).toBe(1);
    const total = await writer.submit((tx) => s.enqueue(tx, ['us_b'], message('b2'), { perUser: 25, total: 21 })).catch((e: unknown) => e);
    expect(total).toMatchObject({ which: 'total' });
  });
});

describe('Web Push endpoints must be public (issue #26)', () => {
  let world: PushWorld;
  let server: TestServer;
  afterAll(async () => {
    await server?.dispose();
    await world?.close();
  });

  it('loopback, private, link-local and metadata endpoints are 400 at registration; a public one is accepted', async () => {
    world = await startPushWorld();
    const env: Record<string, string> = { ...world.env };
    delete env.PUSH_WEB_ENDPOINT_HOSTS;
    server = await startServer({ env: { ...env, LOG_LEVEL: 'warn' } });
    const u = await signUp(server, uniqueEmail('ssrf'));
    const keys = { p256dh: 'BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM', auth: 'tBHItJI5svbpez7KI4CCXg' };
    for (const endpoint of [
      'https://127.0.0.1/push/1',
      'https://localhost/push/1',
      'https://169.254.169.254/latest/meta-data',
      'https://10.1.2.3/x',
      'https://192.168.0.10/x',
      'https://[::1]/x',
      'https://[fd00:ec2::254]/x',
      'http://fcm.googleapis.com/fcm/send/x',
    ]) {
      const r = await server.call('POST', '/push/devices', { platform: 'web', subscription: { endpoint, keys } }, u.auth);
      expect(r.status, `${endpoint}: ${r.text}`).toBe(400);
      expect(r.json.error?.details?.[0]?.path).toBe('/subscription/endpoint');
    }
    // A public address literal (TEST-NET would be refused by some checks; this one is a real public range).
    const ok = await server.call('POST', '/push/devices', { platform: 'web', subscription: { endpoint: 'https://8.8.8.8/push/abc', keys } }, u.auth);
    expect(ok.status, ok.text).toBe(200);
  }, 120_000);
});
