/**
 * SQL for `_push_devices` and `_push_queue`. Parameterized statements only; identifiers come from
 * the table declarations and are quoted by the dialect, placeholders from `dialect.param(n)`, so the
 * same text runs on SQLite and PostgreSQL. Variable-length lists are cut into fixed-size chunks
 * (padded by repeating the last value), so the driver's statement cache sees a handful of shapes.
 */
import { toSnake } from '../core/naming.js';
import type { Dialect } from '../storage/dialect.js';
import type { RawRow, SqlRunner } from '../storage/driver.js';
import type { Platform } from './provider.js';
import { devicesTable, queueTable } from './schema.js';

const CHUNK = 64;
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
}

const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v));

function columnsOf(d: Dialect, columns: object): Record<string, string> {
  const out: Record<string, string> = { id: d.quote('id') };
  for (const name of Object.keys(columns)) out[name] = d.quote(toSnake(name));
  return out;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Pads a chunk to `size` by repeating its last item: `IN (...)` ignores the repeats. */
const padded = <T>(chunk: T[], size: number): T[] => (chunk.length === size ? chunk : [...chunk, ...Array<T>(size - chunk.length).fill(chunk[chunk.length - 1]!)]);

export function pushStore(d: Dialect) {
  const D = columnsOf(d, devicesTable.columns);
  const Q = columnsOf(d, queueTable.columns);
  const DT = d.quote(devicesTable.name);
  const QT = d.quote(queueTable.name);
  let n = 0;
  const p = () => d.param(++n);
  const sql = (build: () => string) => ((n = 0), build());
  const list = (count: number) => Array.from({ length: count }, p).join(', ');
  const as = (expr: string, alias: string) => `${expr} AS ${d.quote(alias)}`;
  const deviceSelect = [as(D.id!, 'id'), as(D.platform!, 'platform'), as(D.userId!, 'userId'), as(D.createdAt!, 'createdAt')].join(', ');
  const queueCols = [Q.id, Q.deviceId, Q.platform, Q.payload, Q.attempts, Q.nextAttemptAt, Q.claimedUntil, Q.expiresAt, Q.createdAt, Q.lastError];
  const queueRow = () => `(${queueCols.map(() => p()).join(', ')})`;
  const insertQueue = (rows: number) => sql(() => `INSERT INTO ${QT} (${queueCols.join(', ')}) VALUES ${Array.from({ length: rows }, queueRow).join(', ')}`);
  // On PostgreSQL, rows another node holds locked are skipped rather than waited for.
  const skipLocked = d.name === 'postgres' ? ' FOR UPDATE OF q SKIP LOCKED' : '';

  const S = Object.freeze({
    findDevice: sql(() => `SELECT ${as(D.id!, 'id')}, ${as(D.userId!, 'userId')} FROM ${DT} WHERE ${D.platform} = ${p()} AND ${D.token} = ${p()}`),
    insertDevice: sql(() => `INSERT INTO ${DT} (${D.id}, ${D.platform}, ${D.token}, ${D.subscription}, ${D.userId}, ${D.createdAt}, ${D.updatedAt}) VALUES (${list(7)})`),
    moveDevice: sql(() => `UPDATE ${DT} SET ${D.userId} = ${p()}, ${D.subscription} = ${p()}, ${D.updatedAt} = ${p()} WHERE ${D.id} = ${p()}`),
    getDevice: sql(() => `SELECT ${deviceSelect} FROM ${DT} WHERE ${D.id} = ${p()}`),
    listDevices: sql(() => `SELECT ${deviceSelect} FROM ${DT} WHERE ${D.userId} = ${p()} ORDER BY ${D.id} LIMIT ${p()}`),
    // Both SQLite and PostgreSQL take LIMIT … OFFSET; the limit bounds one pass.
    beyondCap: sql(() => `SELECT ${as(D.id!, 'id')} FROM ${DT} WHERE ${D.userId} = ${p()} ORDER BY ${D.updatedAt} DESC LIMIT 1000 OFFSET ${p()}`),
    deleteOwnDevice: sql(() => `DELETE FROM ${DT} WHERE ${D.id} = ${p()} AND ${D.userId} = ${p()}`),
    deleteDevice: sql(() => `DELETE FROM ${DT} WHERE ${D.id} = ${p()}`),
    deleteDeviceQueue: sql(() => `DELETE FROM ${QT} WHERE ${Q.deviceId} = ${p()}`),
    devicesOf: sql(() => `SELECT ${as(D.id!, 'id')}, ${as(D.platform!, 'platform')} FROM ${DT} WHERE ${D.userId} IN (${list(CHUNK)}) ORDER BY ${D.id}`),
    insertQueueMany: insertQueue(INSERT_ROWS),
    insertQueueOne: insertQueue(1),
    claimable: sql(
      () =>
        `SELECT ${as(`q.${Q.id}`, 'id')}, ${as(`q.${Q.deviceId}`, 'deviceId')}, ${as(`q.${Q.platform}`, 'platform')}, ${as(`q.${Q.attempts}`, 'attempts')}, ${as(`q.${Q.payload}`, 'payload')}, ` +
        `${as(`q.${Q.expiresAt}`, 'expiresAt')}, ${as(`dv.${D.token}`, 'token')}, ${as(`dv.${D.subscription}`, 'subscription')} ` +
        `FROM ${QT} q JOIN ${DT} dv ON dv.${D.id} = q.${Q.deviceId} ` +
        `WHERE q.${Q.platform} = ${p()} AND q.${Q.nextAttemptAt} <= ${p()} ORDER BY q.${Q.nextAttemptAt} LIMIT ${p()}${skipLocked}`,
    ),
    // The lease is also the next attempt: a claimed row leaves the due range of the
    // (platform, next_attempt_at) index, so a claim reads only the rows it takes, and a row whose
    // worker died is due again when its lease ends.
    claim: sql(() => `UPDATE ${QT} SET ${Q.claimedUntil} = ${p()}, ${Q.nextAttemptAt} = ${p()}, ${Q.attempts} = ${Q.attempts} + 1 WHERE ${Q.id} IN (${list(CHUNK)})`),
    deleteQueued: sql(() => `DELETE FROM ${QT} WHERE ${Q.id} IN (${list(CHUNK)})`),
    // `attempts` (counted by each claim) fences a worker's writes to its own claim: once its lease ran
    // out and another node claimed the row, a late renewal or retry must not touch that node's lease.
    renew: sql(() => `UPDATE ${QT} SET ${Q.claimedUntil} = ${p()}, ${Q.nextAttemptAt} = ${p()} WHERE ${Q.attempts} = ${p()} AND ${Q.id} IN (${list(CHUNK)})`),
    reschedule: sql(() => `UPDATE ${QT} SET ${Q.nextAttemptAt} = ${p()}, ${Q.claimedUntil} = NULL, ${Q.lastError} = ${p()} WHERE ${Q.id} = ${p()} AND ${Q.attempts} = ${p()}`),
    releaseAll: sql(() => `UPDATE ${QT} SET ${Q.claimedUntil} = NULL, ${Q.nextAttemptAt} = ${p()} WHERE ${Q.claimedUntil} IS NOT NULL`),
    pending: sql(() => `SELECT COUNT(*) AS ${d.quote('n')} FROM ${QT}`),
  });

  const toDevice = (r: RawRow): Device => ({ id: String(r.id), platform: r.platform as Platform, userId: String(r.userId), createdAt: String(r.createdAt) });

  return {
    /** Registers (platform, token) for `userId`; a token already known moves to `userId` (SPEC §11b). */
    async register(tx: SqlRunner, v: { id: string; platform: Platform; token: string; subscription: string | null; userId: string; now: string; maxPerUser: number }): Promise<Device> {
      const found = await tx.get(S.findDevice, [v.platform, v.token]);
      if (!found) {
        await tx.run(S.insertDevice, [v.id, v.platform, v.token, v.subscription, v.userId, v.now, v.now]);
        // Bounded per user, so one account cannot grow a fan-out (or the table) without limit.
        for (const extra of await tx.all(S.beyondCap, [v.userId, v.maxPerUser])) {
          await tx.run(S.deleteDevice, [extra.id]);
          await tx.run(S.deleteDeviceQueue, [extra.id]);
        }
        return { id: v.id, platform: v.platform, userId: v.userId, createdAt: v.now };
      }
      const id = String(found.id);
      // Messages queued for the previous owner must not reach the new one.
      if (String(found.userId) !== v.userId) await tx.run(S.deleteDeviceQueue, [id]);
      await tx.run(S.moveDevice, [v.userId, v.subscription, v.now, id]);
      return toDevice((await tx.get(S.getDevice, [id]))!);
    },
    async list(db: SqlRunner, userId: string, limit: number): Promise<Device[]> {
      return (await db.all(S.listDevices, [userId, limit])).map(toDevice);
    },
    /** Removes one of `userId`'s devices and its queued deliveries; false when it is not theirs. */
    async unregister(tx: SqlRunner, id: string, userId: string): Promise<boolean> {
      const { changes } = await tx.run(S.deleteOwnDevice, [id, userId]);
      if (changes > 0) await tx.run(S.deleteDeviceQueue, [id]);
      return changes > 0;
    },
    /** A provider reported the device dead. */
    async removeDevice(tx: SqlRunner, id: string): Promise<void> {
      await tx.run(S.deleteDevice, [id]);
      await tx.run(S.deleteDeviceQueue, [id]);
    },
    /** One queue row per device of `userIds`; answers how many. */
    async enqueue(tx: SqlRunner, userIds: readonly string[], v: { payload: string; now: number; expiresAt: number; newId: () => string }): Promise<number> {
      const devices: RawRow[] = [];
      for (const c of chunks([...new Set(userIds)], CHUNK)) devices.push(...(await tx.all(S.devicesOf, padded(c, CHUNK))));
      const row = (dev: RawRow) => [v.newId(), dev.id, dev.platform, v.payload, 0, v.now, null, v.expiresAt, v.now, null];
      for (const c of chunks(devices, INSERT_ROWS)) {
        if (c.length === INSERT_ROWS) await tx.run(S.insertQueueMany, c.flatMap(row));
        else for (const dev of c) await tx.run(S.insertQueueOne, row(dev));
      }
      return devices.length;
    },
    /** Leases up to `limit` due rows of `platform` until `leaseUntil`, counting the attempt. */
    async claim(tx: SqlRunner, platform: Platform, limit: number, now: number, leaseUntil: number): Promise<Claimed[]> {
      const rows = await tx.all(S.claimable, [platform, now, limit]);
      for (const c of chunks(rows, CHUNK)) await tx.run(S.claim, [leaseUntil, leaseUntil, ...padded(c, CHUNK).map((r) => r.id)]);
      return rows.map((r) => ({
        id: String(r.id),
        deviceId: String(r.deviceId),
        platform: r.platform as Platform,
        attempts: num(r.attempts) + 1,
        payload: String(r.payload),
        expiresAt: num(r.expiresAt),
        target: platform === 'web' ? String(r.subscription) : String(r.token),
      }));
    },
    async done(tx: SqlRunner, ids: readonly string[]): Promise<void> {
      for (const c of chunks(ids, CHUNK)) await tx.run(S.deleteQueued, padded(c, CHUNK));
    },
    /** Extends the leases of rows this worker still holds (`attempts` as counted by its claim). */
    async renew(tx: SqlRunner, held: ReadonlyMap<string, number>, leaseUntil: number): Promise<void> {
      const byAttempts = new Map<number, string[]>();
      for (const [id, attempts] of held) {
        const ids = byAttempts.get(attempts);
        if (ids) ids.push(id);
        else byAttempts.set(attempts, [id]);
      }
      for (const [attempts, ids] of byAttempts) for (const c of chunks(ids, CHUNK)) await tx.run(S.renew, [leaseUntil, leaseUntil, attempts, ...padded(c, CHUNK)]);
    },
    /** Times are BIGINT on PostgreSQL, which refuses a fractional value (SQLite stores it): whole ms only. */
    async reschedule(tx: SqlRunner, id: string, attempts: number, nextAttemptAt: number, error: string): Promise<void> {
      await tx.run(S.reschedule, [Math.ceil(nextAttemptAt), error, id, attempts]);
    },
    /** SQLite has one server process: leases left by a killed one can be released at start. */
    async releaseAll(tx: SqlRunner, now: number): Promise<void> {
      await tx.run(S.releaseAll, [now]);
    },
    async pending(db: SqlRunner): Promise<number> {
      return num((await db.get(S.pending))?.n ?? 0);
    },
  };
}

export type PushStore = ReturnType<typeof pushStore>;
