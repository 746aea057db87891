/**
 * The destination's layout, version 1 (docs/reference/backups.md). Every data object is named by
 * a JSON manifest written after it; a manifest carries the sha256 and size of its object and a
 * `check` (sha256 of the manifest's own JSON without it), so any changed, truncated or missing
 * object is found before it is used. An object without its manifest (an interrupted upload) is
 * never read.
 *
 *   tablebase-backup.json                                  {"format":"tablebase-backup","version":1}
 *   generations/<gen>/snapshots/<id>.db|.dump + <id>.json  a whole database
 *   generations/<gen>/wal/<epoch>/<from>-<to>.wal + .json   WAL frames from..to of one epoch
 *   generations/<gen>/synced.json                          everything before `at` is here
 *   photos/objects/<aa>/<sha256>                           photo bytes, content-addressed
 *   photos/log/<ms>-<rand>.json                            which photo ids appeared or went, when
 *                                                          (or, `base`, every photo at <ms>: photo-gc.ts)
 */
import { createHash, randomBytes } from 'node:crypto';
import { Transform } from 'node:stream';

export const FORMAT_KEY = 'tablebase-backup.json';
export const FORMAT = { format: 'tablebase-backup', version: 1 } as const;

export interface SnapshotManifest {
  readonly kind: 'snapshot';
  readonly id: string;
  readonly generation: string;
  readonly takenAt: string;
  readonly takenAtMs: number;
  readonly bytes: number;
  readonly sha256: string;
  readonly object: string;
  /** `sqlite`: a database file; `postgres`: a logical dump (JSON lines). */
  readonly database: 'sqlite' | 'postgres';
  /** Replaying this epoch from frame 1 through at least `frame` over the file gives its state. */
  readonly position: { readonly epoch: number; readonly frame: number };
}

/**
 * What a snapshot object is, from the database recorded in its manifest: a whole SQLite file
 * (`.db`, restored into a data folder and replayed with WAL segments) or a logical dump (`.dump`,
 * JSON lines, restored into an empty PostgreSQL database). The rest of backup/ asks this, not the
 * database's name.
 */
export type SnapshotFormat = 'file' | 'dump';
const SNAPSHOT_FORMAT: Readonly<Record<SnapshotManifest['database'], SnapshotFormat>> = { sqlite: 'file', postgres: 'dump' };
export const snapshotFormat = (database: SnapshotManifest['database']): SnapshotFormat => SNAPSHOT_FORMAT[database];

export interface SegmentManifest {
  readonly kind: 'segment';
  readonly generation: string;
  readonly epoch: number;
  readonly from: number;
  readonly to: number;
  /** The epoch's 32-byte WAL header, base64. */
  readonly header: string;
  /** For the first segment of an epoch: how many frames the previous epoch had (0 if none). */
  readonly previousEpochFrames?: number;
  readonly bytes: number;
  readonly sha256: string;
  readonly object: string;
  /** [commit frame, commit time ms] of every transaction in the segment. */
  readonly commits: readonly (readonly [number, number])[];
}

export interface SyncedMarker {
  readonly kind: 'synced';
  readonly generation: string;
  readonly at: number;
}

export type PhotoEvent = { readonly id: string; readonly sha256: string; readonly bytes: number } | { readonly id: string; readonly deleted: true };

export interface PhotoLog {
  readonly kind: 'photos';
  readonly at: number;
  readonly events: readonly PhotoEvent[];
  /**
   * A folded log (photo-gc.ts): the whole set of photos at `at`, replacing every earlier log. It
   * sorts after any other log of the same `at`, so one left beside the logs it replaced (a prune
   * interrupted before it removed them) gives the same state.
   */
  readonly base?: true;
}

export type Manifest = SnapshotManifest | SegmentManifest | SyncedMarker | PhotoLog;

/**
 * A pass-through stream that counts and hashes what flows through it: snapshots are hashed on the
 * way up and checked on the way down without holding them in memory.
 */
export function hashingTap(): { tap: Transform; bytes(): number; sha256(): string } {
  const hash = createHash('sha256');
  let bytes = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  return { tap, bytes: () => bytes, sha256: () => hash.digest('hex') };
}

export function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Sortable ids: the time, then randomness (`20261125T190512345Z-3f9a1c`). */
export function newBackupId(ms = Date.now()): string {
  return `${new Date(ms).toISOString().replace(/[-:.]/g, '')}-${randomBytes(3).toString('hex')}`;
}

const pad = (n: number, w: number) => String(n).padStart(w, '0');

export const keys = {
  generation: (gen: string) => `generations/${gen}/`,
  snapshot: (gen: string, id: string, ext: 'db' | 'dump') => `generations/${gen}/snapshots/${id}.${ext}`,
  snapshotManifest: (gen: string, id: string) => `generations/${gen}/snapshots/${id}.json`,
  segment: (gen: string, epoch: number, from: number, to: number) => `generations/${gen}/wal/${pad(epoch, 8)}/${pad(from, 10)}-${pad(to, 10)}.wal`,
  synced: (gen: string) => `generations/${gen}/synced.json`,
  photo: (hash: string) => `photos/objects/${hash.slice(0, 2)}/${hash}`,
  photoLog: (at: number) => `photos/log/${pad(at, 13)}-${randomBytes(3).toString('hex')}.json`,
};

/** A manifest as stored: its JSON with a `check` over the rest. */
export function sealManifest(m: Manifest): Buffer {
  const body = JSON.stringify(m);
  return Buffer.from(JSON.stringify({ ...m, check: sha256(body) }));
}

/** The backup is damaged: names the object, so the one-line error says what to look at. */
export class BackupDamaged extends Error {
  /** The object is not there (rather than there but changed or truncated): restore.ts reads the listing again once. */
  readonly missing: boolean;
  constructor(
    readonly key: string,
    reason: string,
  ) {
    super(`backup damaged: ${key} ${reason}`);
    this.name = 'BackupDamaged';
    this.missing = reason.startsWith('is missing');
  }
}

/** Parses a stored manifest and checks its `check`; a damaged one throws BackupDamaged naming `key`. */
export function openManifest<M extends Manifest>(key: string, data: Buffer | null, kind: M['kind']): M {
  if (!data) throw new BackupDamaged(key, 'is missing');
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
  } catch {
    throw new BackupDamaged(key, 'is not valid JSON (changed or truncated)');
  }
  const { check, ...rest } = parsed;
  if (typeof check !== 'string' || sha256(JSON.stringify(rest)) !== check || rest.kind !== kind) throw new BackupDamaged(key, 'fails its checksum (changed)');
  return rest as unknown as M;
}
