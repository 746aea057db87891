/**
 * `_push_devices` and `_push_queue` (push/schema.ts), statement by statement, for push/store.ts,
 * which keeps the logic (per-user caps, chunking, leases). Lists bound into `IN (…)` are sized by
 * the caller (push/store.ts pads them to a few fixed lengths, so the driver's statement cache
 * sees a handful of shapes). See docs/reference/push.md.
 */
import type { Dialect } from '../dialect.js';
import type { RawRow, SqlRunner } from '../driver.js';
import { as, join, skipLocked, sql, sqlExec, tableRef, type SqlValue, type TableDecl } from '../sql.js';

export interface PushTables {
  readonly devices: TableDecl<'platform' | 'token' | 'subscription' | 'userId' | 'createdAt' | 'updatedAt'>;
  readonly queue: TableDecl<'deviceId' | 'platform' | 'payload' | 'attempts' | 'nextAttemptAt' | 'claimedUntil' | 'expiresAt' | 'createdAt' | 'lastError'>;
}

export interface QueueRow {
  id: string;
  deviceId: string;
  platform: string;
  payload: string;
  now: number;
  expiresAt: number;
}

export function pushRepo(d: Dialect, tables: PushTables) {
  const x = sqlExec(d);
  const D = tableRef(tables.devices);
  const Q = tableRef(tables.queue);
  const q = Q.as('q');
  const dv = D.as('dv');
  const deviceSelect = join([as(D.c.id, 'id'), as(D.c.platform, 'platform'), as(D.c.userId, 'userId'), as(D.c.createdAt, 'createdAt')]);
  const queueCols = join([Q.c.id, Q.c.deviceId, Q.c.platform, Q.c.payload, Q.c.attempts, Q.c.nextAttemptAt, Q.c.claimedUntil, Q.c.expiresAt, Q.c.createdAt, Q.c.lastError]);
  const queueValues = (v: QueueRow) => sql`(${join([v.id, v.deviceId, v.platform, v.payload, 0, v.now, null, v.expiresAt, v.now, null])})`;
  const inList = (values: readonly SqlValue[]) => join(values);

  return {
    findDevice: (r: SqlRunner, platform: string, token: string): Promise<RawRow | undefined> =>
      x.get(r, sql`SELECT ${as(D.c.id, 'id')}, ${as(D.c.userId, 'userId')} FROM ${D.table} WHERE ${D.c.platform} = ${platform} AND ${D.c.token} = ${token}`),
    insertDevice: (r: SqlRunner, v: { id: string; platform: string; token: string; subscription: string | null; userId: string; now: string }) =>
      x.run(
        r,
        sql`INSERT INTO ${D.table} (${join([D.c.id, D.c.platform, D.c.token, D.c.subscription, D.c.userId, D.c.createdAt, D.c.updatedAt])}) VALUES (${join([v.id, v.platform, v.token, v.subscription, v.userId, v.now, v.now])})`,
      ),
    moveDevice: (r: SqlRunner, id: string, v: { userId: string; subscription: string | null; now: string }) =>
      x.run(r, sql`UPDATE ${D.table} SET ${D.c.userId} = ${v.userId}, ${D.c.subscription} = ${v.subscription}, ${D.c.updatedAt} = ${v.now} WHERE ${D.c.id} = ${id}`),
    getDevice: (r: SqlRunner, id: string): Promise<RawRow | undefined> => x.get(r, sql`SELECT ${deviceSelect} FROM ${D.table} WHERE ${D.c.id} = ${id}`),
    listDevices: (r: SqlRunner, userId: string, limit: number) => x.all(r, sql`SELECT ${deviceSelect} FROM ${D.table} WHERE ${D.c.userId} = ${userId} ORDER BY ${D.c.id} LIMIT ${limit}`),
    /** Ids of a user's devices past the newest `keep` (at most 1000 per pass). */
    beyondCap: (r: SqlRunner, userId: string, keep: number) =>
      x.all(r, sql`SELECT ${as(D.c.id, 'id')} FROM ${D.table} WHERE ${D.c.userId} = ${userId} ORDER BY ${D.c.updatedAt} DESC LIMIT 1000 OFFSET ${keep}`),
    deleteOwnDevice: (r: SqlRunner, id: string, userId: string) => x.run(r, sql`DELETE FROM ${D.table} WHERE ${D.c.id} = ${id} AND ${D.c.userId} = ${userId}`),
    deleteDevice: (r: SqlRunner, id: string) => x.run(r, sql`DELETE FROM ${D.table} WHERE ${D.c.id} = ${id}`),
    deleteDeviceQueue: (r: SqlRunner, deviceId: string) => x.run(r, sql`DELETE FROM ${Q.table} WHERE ${Q.c.deviceId} = ${deviceId}`),
    devicesOf: (r: SqlRunner, userIds: readonly string[]) =>
      x.all(r, sql`SELECT ${as(D.c.id, 'id')}, ${as(D.c.platform, 'platform')}, ${as(D.c.userId, 'userId')} FROM ${D.table} WHERE ${D.c.userId} IN (${inList(userIds)}) ORDER BY ${D.c.id}`),
    /** One multi-row INSERT of queue rows (attempts 0, due now, unclaimed). */
    insertQueue: (r: SqlRunner, rows: readonly QueueRow[]) => x.run(r, sql`INSERT INTO ${Q.table} (${queueCols}) VALUES ${join(rows.map(queueValues))}`),
    /**
     * Up to `limit` due rows of `platform`, oldest due first, with their device's target. Where
     * several nodes claim at once (skip-locked capability), rows another holds are skipped.
     */
    claimable: (r: SqlRunner, platform: string, now: number, limit: number, excludeUsers: readonly string[]) =>
      x.all(
        r,
        sql`SELECT ${join([as(q.c.id, 'id'), as(q.c.deviceId, 'deviceId'), as(q.c.platform, 'platform'), as(q.c.attempts, 'attempts'), as(q.c.payload, 'payload'), as(q.c.expiresAt, 'expiresAt'), as(dv.c.token, 'token'), as(dv.c.subscription, 'subscription'), as(dv.c.userId, 'userId')])} FROM ${q.table} JOIN ${dv.table} ON ${dv.c.id} = ${q.c.deviceId} WHERE ${q.c.platform} = ${platform} AND ${q.c.nextAttemptAt} <= ${now} AND ${dv.c.userId} NOT IN (${inList(excludeUsers)}) ORDER BY ${q.c.nextAttemptAt} LIMIT ${limit}${skipLocked(d, 'q')}`,
      ),
    /** Deliveries waiting per user of `userIds` (the per-user cap of ctx.push.send). */
    pendingByUser: (r: SqlRunner, userIds: readonly string[]) =>
      x.all(
        r,
        sql`SELECT ${as(dv.c.userId, 'userId')}, ${as(sql`COUNT(*)`, 'n')} FROM ${q.table} JOIN ${dv.table} ON ${dv.c.id} = ${q.c.deviceId} WHERE ${dv.c.userId} IN (${inList(userIds)}) GROUP BY ${dv.c.userId}`,
      ),
    /**
     * The lease is also the next attempt: a claimed row leaves the due range of the
     * (platform, next_attempt_at) index, so a claim reads only the rows it takes, and a row whose
     * worker died is due again when its lease ends.
     */
    claim: (r: SqlRunner, ids: readonly string[], leaseUntil: number) =>
      x.run(r, sql`UPDATE ${Q.table} SET ${Q.c.claimedUntil} = ${leaseUntil}, ${Q.c.nextAttemptAt} = ${leaseUntil}, ${Q.c.attempts} = ${Q.c.attempts} + 1 WHERE ${Q.c.id} IN (${inList(ids)})`),
    deleteQueued: (r: SqlRunner, ids: readonly string[]) => x.run(r, sql`DELETE FROM ${Q.table} WHERE ${Q.c.id} IN (${inList(ids)})`),
    /**
     * `attempts` (counted by each claim) fences a worker's writes to its own claim: once its lease
     * ran out and another node claimed the row, a late renewal or retry must not touch that lease.
     */
    renew: (r: SqlRunner, ids: readonly string[], attempts: number, leaseUntil: number) =>
      x.run(r, sql`UPDATE ${Q.table} SET ${Q.c.claimedUntil} = ${leaseUntil}, ${Q.c.nextAttemptAt} = ${leaseUntil} WHERE ${Q.c.attempts} = ${attempts} AND ${Q.c.id} IN (${inList(ids)})`),
    reschedule: (r: SqlRunner, id: string, attempts: number, nextAttemptAt: number, error: string) =>
      x.run(r, sql`UPDATE ${Q.table} SET ${Q.c.nextAttemptAt} = ${nextAttemptAt}, ${Q.c.claimedUntil} = NULL, ${Q.c.lastError} = ${error} WHERE ${Q.c.id} = ${id} AND ${Q.c.attempts} = ${attempts}`),
    releaseAll: (r: SqlRunner, now: number) => x.run(r, sql`UPDATE ${Q.table} SET ${Q.c.claimedUntil} = NULL, ${Q.c.nextAttemptAt} = ${now} WHERE ${Q.c.claimedUntil} IS NOT NULL`),
    pending: (r: SqlRunner) => x.get(r, sql`SELECT ${as(sql`COUNT(*)`, 'n')} FROM ${Q.table}`),
  };
}

export type PushRepo = ReturnType<typeof pushRepo>;
