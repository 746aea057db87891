/**
 * The push module's own tables (docs/reference/push.md), declared with the definition API so they migrate with
 * the other internal tables. No rules: `/db` never serves them. Times in the queue are integer
 * epoch milliseconds (compared in SQL without parsing, the same on SQLite and PostgreSQL).
 */
import { column } from '../define/columns.js';
import { table, type AnyTable } from '../define/table.js';

/**
 * One row per registered device. `token` is the FCM/APNs token or, for Web Push, the
 * subscription's endpoint URL (unique per browser), so registering it again finds the same row
 * and moves it to the caller. `subscription` holds the Web Push keys as JSON.
 */
export const devicesTable = table('_push_devices', {
  prefix: 'pd',
  columns: {
    platform: column.text(),
    token: column.text(),
    subscription: column.text().nullable(),
    userId: column.text(),
    createdAt: column.text(),
    updatedAt: column.text(),
  },
  // (userId, updatedAt) serves the per-user list and the per-user cap (newest first) without a sort.
  indexes: [{ columns: ['platform', 'token'], unique: true }, { columns: ['userId', 'updatedAt'] }],
});

/**
 * One row per (message, device) delivery. A worker claims a due row (`nextAttemptAt <= now`) by
 * setting `claimedUntil` and `nextAttemptAt` to the end of a short lease its worker renews while it
 * holds the row; a row whose lease ran out (its worker died) is due again, which makes delivery
 * at-least-once. `attempts` fences a worker's later writes to its own claim (worker.ts). On PostgreSQL the claim adds `FOR UPDATE SKIP LOCKED`, so several nodes drain
 * one queue without taking the same row.
 */
export const queueTable = table('_push_queue', {
  prefix: 'pq',
  columns: {
    deviceId: column.text(),
    platform: column.text(),
    /** The message as JSON: title, body, data, badge, sound. */
    payload: column.text(),
    attempts: column.integer(),
    nextAttemptAt: column.integer(),
    claimedUntil: column.integer().nullable(),
    expiresAt: column.integer(),
    createdAt: column.integer(),
    lastError: column.text().nullable(),
  },
  indexes: [{ columns: ['platform', 'nextAttemptAt'] }, { columns: ['deviceId'] }],
});

export const pushInternalTables: readonly AnyTable[] = Object.freeze([devicesTable, queueTable]);
