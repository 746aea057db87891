/**
 * PostgreSQL mode (docs/reference/backups.md): logical snapshots, restored into an empty database.
 */
import type { Destination } from './destination.js';
import type { SnapshotInfo } from './snapshot.js';

export async function postgresSnapshot(_dest: Destination, _databaseUrl: string): Promise<SnapshotInfo> {
  throw new Error('PostgreSQL snapshots are not available in this build yet');
}

export async function restorePostgres(_dest: Destination, _databaseUrl: string, _at: number | undefined): Promise<SnapshotInfo> {
  throw new Error('PostgreSQL restore is not available in this build yet');
}
