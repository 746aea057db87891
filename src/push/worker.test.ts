/**
 * Leases across nodes (docs/reference/push.md: at-least-once, no double send while a lease is live): two
 * workers on one queue stand in for two nodes. A held row's lease is renewed, so the other node
 * never takes it; when its holder dies the lease runs out and the other node sends it; the dead
 * holder's late outcome does not touch the new claim (fenced by `attempts`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { compileProject } from '../core/model.js';
import { defineProject } from '../define/project.js';
import { newId } from '../storage/ids.js';
import { autoMigrate } from '../storage/migrations/index.js';
import { openSqlite, type SqliteDriver } from '../storage/sqlite/driver.js';
import { WriteQueue } from '../storage/writer.js';
import type { Outcome, PushProvider } from './provider.js';
import { pushInternalTables } from './schema.js';
import { pushStore } from './store.js';
import { backoffMs, DeliveryWorker } from './worker.js';

/** An FCM stand-in whose sends wait until the test answers them. */
class HeldProvider implements PushProvider {
  readonly platform = 'fcm' as const;
  readonly concurrency = 4;
  readonly waiting: ((o: Outcome) => void)[] = [];
  send(): Promise<Outcome> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }
  async close() {}
}

const silent = { info() {}, warn() {}, error() {}, debug() {} };
const LEASE_MS = 150;
let dir: string;
let driver: SqliteDriver;
let writer: WriteQueue;
const workers: DeliveryWorker[] = [];

const until = async (check: () => boolean | Promise<boolean>, ms = 3000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

function node(provider: HeldProvider): DeliveryWorker {
  const w = new DeliveryWorker({
    store: pushStore(driver.dialect),
    providers: new Map([['fcm', provider]]),
    write: (fn) => writer.submit((tx) => fn(tx)),
    reader: driver,
    log: silent,
    maxAttempts: 5,
    retryBaseMs: 10,
    leaseMs: LEASE_MS,
    pollMs: 20,
    releaseAtStart: false,
  });
  workers.push(w);
  return w;
}

const row = async () => (await driver.get('SELECT attempts, claimed_until AS "claimedUntil" FROM _push_queue', [])) as { attempts: number; claimedUntil: number | null } | undefined;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tb-push-worker-'));
  driver = openSqlite(join(dir, 'db.sqlite'));
  const model = compileProject(defineProject({ tables: [] }), [...pushInternalTables]);
  await autoMigrate({ driver, model, dialect: driver.dialect, dir: join(dir, 'm'), allowDestructive: true, name: 'push_worker_test' });
  writer = new WriteQueue(driver);
  const store = pushStore(driver.dialect);
  const now = Date.now();
  await writer.submit(async (tx) => {
    await store.register(tx, { id: newId('pd'), platform: 'fcm', token: 't1', subscription: null, userId: 'us_a', now: new Date(now).toISOString(), maxPerUser: 5 });
    await store.enqueue(tx, ['us_a'], { payload: '{"title":"T","body":"B"}', now, expiresAt: now + 60_000, newId: () => newId('pq') }, { perUser: 1000, total: 100_000 });
  });
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop(0)));
  await writer.whenIdle();
  await driver.close();
  rmSync(dir, { recursive: true, force: true });
});

it('a held row stays with its node while the lease is renewed, and goes to another node once its holder dies', async () => {
  const a = new HeldProvider();
  const b = new HeldProvider();
  const nodeA = node(a);
  await nodeA.start();
  await until(() => a.waiting.length === 1);
  await node(b).start();
  await pause(LEASE_MS * 5); // several leases long: renewed, so never due for node B
  expect(b.waiting).toHaveLength(0);
  expect(await row()).toMatchObject({ attempts: 1 });

  await nodeA.stop(0); // node A "dies": its renewals stop with the send still out
  await until(() => b.waiting.length === 1);
  expect(await row()).toMatchObject({ attempts: 2 });
  // Node A's provider answers late with a retry: its reschedule is fenced off node B's live claim.
  a.waiting[0]!({ kind: 'retry', reason: '503' });
  await pause(100);
  await writer.whenIdle();
  const claimed = await row();
  expect(claimed).toMatchObject({ attempts: 2 });
  expect(claimed!.claimedUntil).not.toBeNull();
  await pause(LEASE_MS * 2);
  expect(a.waiting).toHaveLength(1);
  expect(b.waiting).toHaveLength(1);
  b.waiting[0]!({ kind: 'sent' });
  await until(async () => (await row()) === undefined);
});

it('backoff delays are whole milliseconds (the queue’s times are BIGINT on PostgreSQL)', () => {
  for (let attempt = 1; attempt < 8; attempt++) expect(Number.isInteger(backoffMs(attempt, 200, 0, () => 0.123456789))).toBe(true);
  expect(Number.isInteger(backoffMs(1, 1000, 1234.5, () => 0))).toBe(true);
});
