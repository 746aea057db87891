/** Backup settings and status (docs/reference/backups.md, docs/reference/configuration.md): the config layer, so createApp and the CLI read them alike. */
import type { BackupOptions } from '../define/project.js';

/** A destination URL this build understands, or a one-line reason (naming only the scheme: the URL may carry credentials). */
export function checkBackupUrl(url: string, source = '--backup'): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `${source} must be a file:///absolute/path or s3://bucket/prefix URL; the value given is not a URL`;
  }
  if (u.protocol === 'file:') return u.pathname.length > 1 ? undefined : `${source}: a file:// URL needs an absolute folder, e.g. file:///var/backups/app`;
  if (u.protocol === 's3:') return u.hostname ? undefined : `${source}: an s3:// URL needs a bucket, e.g. s3://bucket/prefix`;
  return `${source} must be a file:/// or s3:// URL, not ${u.protocol}//…`;
}

export interface BackupSettings {
  readonly to: string;
  readonly syncIntervalMs: number;
  readonly snapshotEvery: string;
  readonly retainDays: number;
}

export interface BackupStatus {
  /** Without credentials. */
  readonly destination: string;
  readonly lastSyncAt: string | null;
  /** Age of the oldest committed write not yet at the destination; 0 when caught up. */
  readonly lagMs: number;
  readonly failures: number;
  /** Three or more consecutive failures: /health says degraded. */
  readonly failing: boolean;
}

/** The settings in force: flag, then BACKUP_URL, then the config's `backup.to`; undefined: no backup. */
export function resolveBackup(flag: string | undefined, env: NodeJS.ProcessEnv, options: BackupOptions | undefined): BackupSettings | undefined {
  const source = flag !== undefined ? '--backup' : env.BACKUP_URL ? 'BACKUP_URL' : 'backup.to';
  const to = flag ?? (env.BACKUP_URL || undefined) ?? options?.to;
  if (!to) return undefined;
  const problem = checkBackupUrl(to, source);
  if (problem) throw new Error(problem);
  const syncIntervalMs = options?.syncIntervalMs ?? 1000;
  const retainDays = options?.retainDays ?? 7;
  if (!Number.isFinite(syncIntervalMs) || syncIntervalMs < 50 || syncIntervalMs > 3_600_000) throw new Error('backup.syncIntervalMs must be between 50 and 3600000');
  if (!Number.isFinite(retainDays) || retainDays <= 0) throw new Error('backup.retainDays must be a positive number of days');
  return Object.freeze({ to, syncIntervalMs, snapshotEvery: options?.snapshotEvery ?? '0 3 * * *', retainDays });
}
