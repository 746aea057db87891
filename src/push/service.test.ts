import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compileProject } from '../core/model.js';
import { defineProject } from '../define/project.js';
import type { Jwt } from '../define/types.js';
import { newId } from '../storage/ids.js';
import { autoMigrate } from '../storage/migrations/index.js';
import { openSqlite, type SqliteDriver } from '../storage/sqlite/driver.js';
import { WriteQueue } from '../storage/writer.js';
import type { PushSetup } from './config.js';
import type { Outcome, Platform, PushPayload, PushProvider } from './provider.js';
import { pushInternalTables } from './schema.js';
import { createPushService, type PushService } from './service.js';
import { backoffMs } from './worker.js';

/** A provider whose answers the test scripts; it records every send. */
class FakeProvider implements PushProvider {
  readonly concurrency = 4;
  sent: { target: string; payload: PushPayload }[] = [];
  script: Outcome[] = [];
  constructor(readonly platform: Platform) {}
  async send(target: string, payload: PushPayload): Promise<Outcome> {
    const outcome = this.script.shift() ?? { kind: 'sent' };
    if (outcome.kind === 'sent') this.sent.push({ target, payload });
    return outcome;
  }
  async close() {}
}

const jwt = (userId: string) => ({ userId, sub: userId, table: 'users', admin: { isAdmin: false } }) as Jwt;
const silent = { info() {}, warn() {}, error() {}, debug() {} };

let dir: string;
let driver: SqliteDriver;
let writer: WriteQueue;
let fcm: FakeProvider;
let apns: FakeProvider;
let push: PushService;

const until = async (check: () => boolean | Promise<boolean>, ms = 3000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tb-push-'));
  driver = openSqlite(join(dir, 'db.sqlite'));
  const model = compileProject(defineProject({ tables: [] }), [...pushInternalTables]);
  await autoMigrate({ driver, model, dialect: driver.dialect, dir: join(dir, 'm'), allowDestructive: true, name: 'push_test' });
  writer = new WriteQueue(driver);
  fcm = new FakeProvider('fcm');
  apns = new FakeProvider('apns');
  const setup: PushSetup = {
    providers: new Map<Platform, PushProvider>([
      ['fcm', fcm],
      ['apns', apns],
    ]),
    vapidPublicKey: undefined,
    maxAttempts: 3,
    retryBaseMs: 20,
    maxDevicesPerUser: 3,
    maxPendingPerUser: 1000,
    maxPending: 100_000,
    webEndpointHosts: ['push.example'],
  };
  push = createPushService({ setup, dialect: driver.dialect, reader: driver, write: (fn) => writer.submit((tx) => fn(tx)), newId, log: silent, releaseAtStart: true });
});

afterEach(async () => {
  await push.stop();
  await writer.whenIdle();
  await driver.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('devices', () => {
  it('registers, lists only the caller’s devices, and moves a token to whoever registers it last', async () => {
    const a = await push.register(jwt('us_a'), { platform: 'fcm', token: 'tok-1' });
    expect(a).toMatchObject({ platform: 'fcm', userId: 'us_a' });
    expect(a.id).toMatch(/^pd_/);
    await push.register(jwt('us_a'), { platform: 'apns', token: 'ab'.repeat(32) });
    expect(await push.list(jwt('us_a'))).toHaveLength(2);
    const moved = await push.register(jwt('us_b'), { platform: 'fcm', token: 'tok-1' });
    expect(moved.id).toBe(a.id);
    expect(moved.userId).toBe('us_b');
    expect((await push.list(jwt('us_a'))).map((d) => d.platform)).toEqual(['apns']);
  });

  it('keeps at most maxDevicesPerUser devices per user, dropping the least recently registered', async () => {
    for (const t of ['t1', 't2', 't3']) await push.register(jwt('us_a'), { platform: 'fcm', token: t });
    await new Promise((r) => setTimeout(r, 5));
    await push.register(jwt('us_a'), { platform: 'fcm', token: 't1' }); // refreshed: now the newest
    await new Promise((r) => setTimeout(r, 5));
    await push.register(jwt('us_a'), { platform: 'fcm', token: 't4' });
    expect(await push.list(jwt('us_a'))).toHaveLength(3);
    await push.send({ userId: 'us_a', title: 'T', body: 'B' });
    await push.start();
    await until(async () => (await push.metrics()).pending === 0);
    expect(fcm.sent.map((s) => s.target).sort()).toEqual(['t1', 't3', 't4']);
  });

  it('with endpointHosts, a Web Push endpoint elsewhere is refused (no requests to internal addresses)', async () => {
    const web = { platform: 'web' as const, concurrency: 1, send: async () => ({ kind: 'sent' as const }), close: async () => {} };
    const setup: PushSetup = {
      providers: new Map<Platform, PushProvider>([['web', web]]),
      vapidPublicKey: 'k',
      maxAttempts: 1,
      retryBaseMs: 1,
      maxDevicesPerUser: 5,
      maxPendingPerUser: 1000,
      maxPending: 100_000,
      webEndpointHosts: ['push.example'],
    };
    const svc = createPushService({ setup, dialect: driver.dialect, reader: driver, write: (fn) => writer.submit((tx) => fn(tx)), newId, log: silent, releaseAtStart: false });
    const sub = (endpoint: string) => ({ platform: 'web' as const, subscription: { endpoint, keys: { p256dh: 'BAAA', auth: 'AAAA' } } });
    expect(await svc.register(jwt('us_a'), sub('https://eu.push.example/x'))).toMatchObject({ platform: 'web' });
    await expect(svc.register(jwt('us_a'), sub('https://169.254.169.254/latest'))).rejects.toMatchObject({ status: 400 });
    await expect(svc.register(jwt('us_a'), sub('https://evilpush.example/x'))).rejects.toMatchObject({ status: 400 });
  });

  it('refuses an unconfigured platform, a missing token, and another user’s device', async () => {
    await expect(push.register(jwt('us_a'), { platform: 'web', subscription: { endpoint: 'https://x', keys: { p256dh: 'a', auth: 'b' } } })).rejects.toMatchObject({ status: 400 });
    await expect(push.register(jwt('us_a'), { platform: 'fcm', token: '' })).rejects.toMatchObject({ status: 400 });
    await expect(push.register(null, { platform: 'fcm', token: 't' })).rejects.toMatchObject({ status: 401 });
    const d = await push.register(jwt('us_a'), { platform: 'fcm', token: 't' });
    await expect(push.unregister(jwt('us_b'), d.id)).rejects.toMatchObject({ status: 404 });
    await push.unregister(jwt('us_a'), d.id);
    expect(await push.list(jwt('us_a'))).toEqual([]);
  });
});

describe('send and delivery', () => {
  it('queues one row per device of the target users before it resolves, and delivers only to them', async () => {
    await push.register(jwt('us_a'), { platform: 'fcm', token: 'a1' });
    await push.register(jwt('us_a'), { platform: 'apns', token: 'aa'.repeat(32) });
    await push.register(jwt('us_b'), { platform: 'fcm', token: 'b1' });
    expect(await push.send({ userId: 'us_a', title: 'T', body: 'B', data: { k: 1 } })).toEqual({ queued: 2 });
    expect(await push.metrics()).toMatchObject({ pending: 2 });
    await push.start();
    await until(async () => (await push.metrics()).pending === 0);
    expect(fcm.sent.map((s) => s.target)).toEqual(['a1']);
    expect(apns.sent).toHaveLength(1);
    expect(fcm.sent[0]!.payload).toMatchObject({ title: 'T', body: 'B', data: { k: 1 } });
    expect(await push.metrics()).toMatchObject({ sent: 2, failed: 0 });
  });

  it('a dead token removes the device; retries back off and then succeed; out of tries is a failure', async () => {
    await push.register(jwt('us_a'), { platform: 'fcm', token: 'dead' });
    await push.register(jwt('us_b'), { platform: 'apns', token: 'bb'.repeat(32) });
    fcm.script = [{ kind: 'dead', reason: 'UNREGISTERED' }];
    apns.script = [
      { kind: 'retry', reason: '503' },
      { kind: 'retry', reason: '503' },
    ];
    await push.start();
    await push.send({ userIds: ['us_a', 'us_b'], title: 'T', body: 'B' });
    await until(async () => (await push.metrics()).pending === 0);
    expect(await push.list(jwt('us_a'))).toEqual([]);
    expect(apns.sent).toHaveLength(1);
    expect(await push.metrics()).toMatchObject({ sent: 1, retried: 2, failed: 1, removedDevices: 1 });
    apns.script = [
      { kind: 'retry', reason: '500' },
      { kind: 'retry', reason: '500' },
      { kind: 'retry', reason: '500' },
    ];
    await push.send({ userId: 'us_b', title: 'T', body: 'B' });
    await until(async () => (await push.metrics()).pending === 0);
    expect(push.failures()[0]!.reason).toMatch(/gave up after 3 tries/);
  });

  it('inside a write job (a before-hook) the rows join that transaction and roll back with it', async () => {
    await push.register(jwt('us_a'), { platform: 'fcm', token: 'a1' });
    await expect(
      writer.submit(async (tx) => {
        await push.send({ userId: 'us_a', title: 'T', body: 'B' }, tx);
        throw new Error('hook rejected');
      }),
    ).rejects.toThrow('hook rejected');
    expect(await push.metrics()).toMatchObject({ pending: 0 });
    await writer.submit(async (tx) => push.send({ userId: 'us_a', title: 'T', body: 'B' }, tx));
    expect(await push.metrics()).toMatchObject({ pending: 1 });
  });

  it('refuses malformed messages', async () => {
    await expect(push.send({ userIds: [], title: 'T', body: 'B' })).rejects.toThrow(/userId/);
    await expect(push.send({ userId: 'u', title: 'T', body: 'x'.repeat(5000) })).rejects.toThrow(/bytes/);
    await expect(push.send({ userId: 'u', title: 'T', body: 'B', badge: -1 })).rejects.toThrow(/badge/);
  });
});

describe('backoffMs', () => {
  it('doubles per attempt with equal jitter and honours Retry-After', () => {
    expect(backoffMs(1, 1000, 0, () => 0)).toBe(500);
    expect(backoffMs(3, 1000, 0, () => 1)).toBe(4000);
    expect(backoffMs(1, 1000, 7000, () => 1)).toBe(7000);
    expect(backoffMs(40, 1000, 0, () => 1)).toBe(3_600_000);
  });
});
