/**
 * Where backups go (docs/reference/backups.md): a key/value store of immutable objects under
 * slash-separated keys. A folder (`file:///abs/path`) and S3 (`s3://bucket/prefix`) implement it;
 * everything else in src/backup/ speaks only this interface.
 */
import type { Readable } from 'node:stream';
import { checkBackupUrl } from '../core/backup-settings.js';

export { checkBackupUrl };

export interface ObjectInfo {
  readonly key: string;
  readonly bytes: number;
}

export interface Destination {
  /** The destination as it may be shown: never credentials. */
  readonly display: string;
  /** Writes `key` whole or not at all (a reader never sees half an object). */
  put(key: string, data: Buffer): Promise<void>;
  /** Same for a large object read from a stream (snapshots). */
  putStream(key: string, data: Readable): Promise<void>;
  /** The object's bytes, or null when it does not exist. */
  get(key: string): Promise<Buffer | null>;
  /** A stream of the object's bytes, or null when it does not exist. */
  getStream(key: string): Promise<Readable | null>;
  /** Every object whose key starts with `prefix`, in key order. */
  list(prefix: string): Promise<ObjectInfo[]>;
  delete(key: string): Promise<void>;
}

/** The URL without user, password or query (which may hold keys). */
export function displayUrl(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname}`;
}
