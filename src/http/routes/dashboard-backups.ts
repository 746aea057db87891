/**
 * GET/POST /dashboard/backups (docs/reference/http-api.md, docs/reference/backups.md): the
 * destination (without credentials), last sync, lag, the restorable window and the snapshots;
 * POST takes a snapshot now (a call while one runs joins it). 404 without a destination.
 */
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../core/errors.js';
import { defineRoute } from '../declare.js';
import type { Services } from '../services.js';

const Snapshot = Type.Object({ id: Type.String(), takenAt: Type.String({ format: 'date-time' }), bytes: Type.Integer({ minimum: 0 }) });
const time = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function backupOf(s: Services) {
  if (!s.backup) throw new ApiError('NOT_FOUND', 'No backup destination is configured (--backup, BACKUP_URL or config backup.to)');
  return s.backup;
}

export const dashboardBackupRoutes = [
  defineRoute({
    family: 'dashboard',
    access: 'admin',
    serverWide: true, // the backup runs where the writer is: workers forward this
    method: 'GET',
    path: '/dashboard/backups',
    summary: 'Backup destination, lag, restorable window and snapshots (admin)',
    description: '404 NOT_FOUND when the server runs without a backup destination.',
    operationId: 'dashboardBackups',
    responses: {
      200: Type.Object({
        destination: Type.String(),
        lastSyncAt: time,
        lagMs: Type.Number({ minimum: 0 }),
        earliest: time,
        latest: time,
        snapshots: Type.Array(Snapshot),
      }),
    },
    errors: ['NOT_FOUND', 'UNAVAILABLE'],
    handler: async (_i, s) => {
      const b = backupOf(s);
      const st = b.status();
      const listed = await b.snapshots().catch(() => {
        throw new ApiError('UNAVAILABLE', 'The backup destination is not answering');
      });
      return { destination: st.destination, lastSyncAt: st.lastSyncAt, lagMs: st.lagMs, earliest: iso(listed.earliest), latest: iso(listed.latest), snapshots: listed.snapshots };
    },
  }),
  defineRoute({
    family: 'dashboard',
    access: 'admin',
    serverWide: true,
    method: 'POST',
    path: '/dashboard/backups',
    summary: 'Take a snapshot now (admin)',
    description: 'Answers when the snapshot is at the destination; a call while one runs joins it. 404 NOT_FOUND without a destination.',
    operationId: 'dashboardBackupNow',
    body: 'none',
    responses: { 200: Snapshot },
    errors: ['NOT_FOUND', 'UNAVAILABLE'],
    handler: async (_i, s) =>
      backupOf(s)
        .snapshotNow()
        .catch(() => {
          throw new ApiError('UNAVAILABLE', 'The snapshot could not be written to the backup destination');
        }),
  }),
];
