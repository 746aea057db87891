/**
 * The push store over `_push_devices` and `_push_queue`: registration, fan-out, claims and leases.
 * The statements are storage's (storage/repos/push.ts). Variable-length lists are cut into
 * fixed-size chunks (padded by repeating the last value), so the driver's statement cache sees a
 * handful of shapes.
 */
import { ApiError } from '../core/errors.js';
import type { Dialect } from '../storage/dialect.js';
import type { RawRow, SqlRunner } from '../storage/driver.js';
import { pushRepo, type QueueRow } from '../storage/repos/push.js';
import type { Platform } from './provider.js';
import { devicesTable, queueTable } from './schema.js';

const CHUNK = 64;
/** Users skipped by a claim, padded to this many (one statement shape). */
const EXCLUDE = 16;
const INSERT_ROWS = 32;

export interface Device {
  id: string;
  platform: Platform;
  userId: string;
  createdAt: string;
}

export interface Claimed {
  id: string;
  deviceId: string;
  platform: Platform;
  attempts: number;
  payload: string;
  expiresAt: number;
  /** The token (FCM, APNs) or the subscription JSON (Web Push). */
  target: string;
  /** The device's owner: the worker shares its slots fairly between users. */
  userId: string;
}

/** `ctx.push.send` past a cap: a user-facing error a hook can catch (429 when uncaught). */
export class PushQueueFull extends ApiError {
  constructor(readonly which: 'user' | 'total') {
    super('RATE_LIMITED', which === 'user' ? 'Too many push notifications are waiting for this user; try again later' : 'Too many push notifications are waiting; try again later', {
      headers: { 'Retry-After': '60' },
    });
  }
}

const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v));

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Pads a chunk to `size` by repeating its last item: `IN (...)` ignores the repeats. */
const padded = <T>(chunk: T[], size: number): T[] => (chunk.length === size ? chunk : [...chunk, ...Array<T>(size - chunk.length).fill(chunk[chunk.length - 1]!)]);

export function pushStore(d: Dialect) {
  const S = pushRepo(d, { devices: devicesTable, queue: queueTable });

  const toDevice = (r: RawRow): Device => ({ id: String(r.id), platform: r.platform as Platform, userId: String(r.userId), createdAt: String(r.createdAt) });

  return {
    /** Registers (platform, token) for `userId`; a token already known moves to `userId` (docs/reference/push.md). */
    async register(tx: SqlRunner, v: { id: string; platform: Platform; token: string; subscription: string | null; userId: string; now: string; maxPerUser: number }): Promise<Device> {
      const found = await S.findDevice(tx, v.platform, v.token);
      if (!found) {
        await S.insertDevice(tx, v);
        // Bounded per user, so one account cannot grow a fan-out (or the table) without limit.
        for (const extra of await S.beyondCap(tx, v.userId, v.maxPerUser)) {
          await S.deleteDevice(tx, String(extra.id));
          await S.deleteDeviceQueue(tx, String(extra.id));
        }
        return { id: v.id, platform: v.platform, userId: v.userId, createdAt: v.now };
      }
      const id = String(found.id);
      // Messages queued for the previous owner must not reach the new one.
      if (String(found.userId) !== v.userId) await S.deleteDeviceQueue(tx, id);
      await S.moveDevice(tx, id, v);
      return toDevice((await S.getDevice(tx, id))!);
    },
    async list(db: SqlRunner, userId: string, limit: number): Promise<Device[]> {
      return (await S.listDevices(db, userId, limit)).map(toDevice);
    },
    /** Removes one of `userId`'s devices and its queued deliveries; false when it is not theirs. */
    async unregister(tx: SqlRunner, id: string, userId: string): Promise<boolean> {
      const { changes } = await S.deleteOwnDevice(tx, id, userId);
      if (changes > 0) await S.deleteDeviceQueue(tx, id);
      return changes > 0;
    },
    /** A provider reported the device dead. */
    async removeDevice(tx: SqlRunner, id: string): Promise<void> {
      await S.deleteDevice(tx, id);
      await S.deleteDeviceQueue(tx, id);
    },
    /**
     * One queue row per device of `userIds`; answers how many. Refused (nothing queued) when a
     * target user would hold more than `caps.perUser` waiting deliveries, or the queue more than
     * `caps.total` (docs/reference/push.md): one sender cannot flood the queue.
     */
    async enqueue(tx: SqlRunner, userIds: readonly string[], v: { payload: string; now: number; expiresAt: number; newId: () => string }, caps: { perUser: number; total: number }): Promise<number> {
      const devices: RawRow[] = [];
      for (const c of chunks([...new Set(userIds)], CHUNK)) devices.push(...(await S.devicesOf(tx, padded(c, CHUNK))));
      if (devices.length === 0) return 0;
      if (num((await S.pending(tx))?.n ?? 0) + devices.length > caps.total) throw new PushQueueFull('total');
      const adding = new Map<string, number>();
      for (const d of devices) adding.set(String(d.userId), (adding.get(String(d.userId)) ?? 0) + 1);
      for (const c of chunks([...adding.keys()], CHUNK)) {
        for (const row of await S.pendingByUser(tx, padded(c, CHUNK))) {
          if (num(row.n) + (adding.get(String(row.userId)) ?? 0) > caps.perUser) throw new PushQueueFull('user');
        }
      }
      for (const [, n] of adding) if (n > caps.perUser) throw new PushQueueFull('user');
      const row = (dev: RawRow): QueueRow => ({ id: v.newId(), deviceId: String(dev.id), platform: String(dev.platform), payload: v.payload, now: v.now, expiresAt: v.expiresAt });
      for (const c of chunks(devices, INSERT_ROWS)) {
        if (c.length === INSERT_ROWS) await S.insertQueue(tx, c.map(row));
        else for (const dev of c) await S.insertQueue(tx, [row(dev)]);
      }
      return devices.length;
    },
    /**
     * Leases up to `limit` due rows of `platform` until `leaseUntil`, counting the attempt — fairly:
     * users in `excludeUsers` (at their in-flight share already) are skipped, and of the oldest
     * due rows at most `perUser` per user are taken, so one user's backlog of hanging endpoints
     * cannot fill every slot ahead of everyone else (docs/reference/push.md).
     */
    async claim(
      tx: SqlRunner,
      platform: Platform,
      limit: number,
      now: number,
      leaseUntil: number,
      fair: { excludeUsers: readonly string[]; perUser: number } = { excludeUsers: [], perUser: limit },
    ): Promise<Claimed[]> {
      const exclude = fair.excludeUsers.slice(0, EXCLUDE);
      const candidates = await S.claimable(tx, platform, now, Math.min(limit * 4, 1024), padded(exclude.length ? exclude : [''], EXCLUDE));
      const taken = new Map<string, number>();
      const rows: RawRow[] = [];
      for (const r of candidates) {
        if (rows.length >= limit) break;
        const user = String(r.userId);
        const n = taken.get(user) ?? 0;
        if (n >= fair.perUser) continue;
        taken.set(user, n + 1);
        rows.push(r);
      }
      for (const c of chunks(rows, CHUNK))
        await S.claim(
          tx,
          padded(c, CHUNK).map((r) => String(r.id)),
          leaseUntil,
        );
      return rows.map((r) => ({
        id: String(r.id),
        deviceId: String(r.deviceId),
        platform: r.platform as Platform,
        attempts: num(r.attempts) + 1,
        payload: String(r.payload),
        expiresAt: num(r.expiresAt),
        target: platform === 'web' ? String(r.subscription) : String(r.token),
        userId: String(r.userId),
      }));
    },
    async done(tx: SqlRunner, ids: readonly string[]): Promise<void> {
      for (const c of chunks(ids, CHUNK)) await S.deleteQueued(tx, padded(c, CHUNK));
    },
    /** Extends the leases of rows this worker still holds (`attempts` as counted by its claim). */
    async renew(tx: SqlRunner, held: ReadonlyMap<string, number>, leaseUntil: number): Promise<void> {
      const byAttempts = new Map<number, string[]>();
      for (const [id, attempts] of held) {
        const ids = byAttempts.get(attempts);
        if (ids) ids.push(id);
        else byAttempts.set(attempts, [id]);
      }
      for (const [attempts, ids] of byAttempts) for (const c of chunks(ids, CHUNK)) await S.renew(tx, padded(c, CHUNK), attempts, leaseUntil);
    },
    /** Times are BIGINT on PostgreSQL, which refuses a fractional value (SQLite stores it): whole ms only. */
    async reschedule(tx: SqlRunner, id: string, attempts: number, nextAttemptAt: number, error: string): Promise<void> {
      await S.reschedule(tx, id, attempts, Math.ceil(nextAttemptAt), error);
    },
    /** SQLite has one server process: leases left by a killed one can be released at start. */
    async releaseAll(tx: SqlRunner, now: number): Promise<void> {
      await S.releaseAll(tx, now);
    },
    async pending(db: SqlRunner): Promise<number> {
      return num((await S.pending(db))?.n ?? 0);
    },
  };
}

export type PushStore = ReturnType<typeof pushStore>;
