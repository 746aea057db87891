/**
 * Backups and point-in-time restore (docs/reference/backups.md). `startBackup` is the one call the
 * composition root makes, only in the process that owns the SQLite writer.
 */
import type { BackupSettings, BackupStatus } from '../core/backup-settings.js';
import type { Logger } from '../core/logger.js';
import type { BlobStore } from '../photos/blob-store.js';
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

/** `photoStore`: the server's photo store (`--storage`), through which photo bytes are read. */
export async function startBackup(o: {
  driver: Driver;
  photoStore: BlobStore;
  settings: BackupSettings | undefined;
  databaseUrl: string | undefined;
  log: Logger;
}): Promise<BackupService | undefined> {
  if (!o.settings) return undefined;
  const dest = await openDestination(o.settings.to);
  if (!(o.driver instanceof SqliteDriver)) {
    // PostgreSQL: scheduled and on-demand logical snapshots; point in time is PostgreSQL's own WAL
    // archiving. Photos kept outside the database (a bucket) are shipped beside them.
    if (!o.databaseUrl) return undefined;
    const { PostgresBackup } = await import('./postgres.js');
    return new PostgresBackup(dest, o.databaseUrl, o.settings, o.log, o.photoStore);
  }
  const b = new ContinuousBackup({ dest, driver: o.driver, photoStore: o.photoStore, settings: o.settings, log: o.log });
  await b.start();
  o.log.info({ destination: dest.display }, 'continuous backup started');
  return b;
}

export type { SnapshotInfo };
export type { BackupStatus };
