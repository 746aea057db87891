/**
 * Backups and point-in-time restore (docs/reference/backups.md). `startBackup` is the one call the
 * composition root makes, only in the process that owns the SQLite writer.
 */
import type { BackupSettings, BackupStatus } from '../core/backup-settings.js';
import type { Logger } from '../core/logger.js';
import type { Driver } from '../storage/driver.js';
import { SqliteDriver } from '../storage/sqlite/driver.js';
import { ContinuousBackup } from './continuous.js';
import { openDestination } from './open.js';
import type { SnapshotInfo } from './snapshot.js';

export interface BackupService {
  status(): BackupStatus;
  snapshotNow(): Promise<SnapshotInfo>;
  snapshots(): Promise<{ earliest: number | null; latest: number | null; snapshots: SnapshotInfo[] }>;
  stop(): Promise<void>;
}

export async function startBackup(o: { driver: Driver; dataDir: string; settings: BackupSettings | undefined; log: Logger }): Promise<BackupService | undefined> {
  if (!o.settings) return undefined;
  const dest = await openDestination(o.settings.to);
  if (!(o.driver instanceof SqliteDriver)) {
    o.log.warn('continuous backup runs on SQLite; on PostgreSQL use `tablebase backup create` (docs/reference/backups.md)');
    return undefined;
  }
  const b = new ContinuousBackup({ dest, driver: o.driver, dataDir: o.dataDir, settings: o.settings, log: o.log });
  b.start();
  o.log.info({ destination: dest.display }, 'continuous backup started');
  return b;
}

export type { SnapshotInfo };
export type { BackupStatus };
