/**
 * Uploading a snapshot (docs/reference/backups.md): the object first, hashed as it streams, its
 * manifest last — a snapshot interrupted by kill -9 has no manifest and is never listed or used.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Transform } from 'node:stream';
import type { Destination } from './destination.js';
import { keys, newBackupId, sealManifest, snapshotFormat, type SnapshotManifest } from './layout.js';

export interface SnapshotInfo {
  readonly id: string;
  readonly takenAt: string;
  readonly bytes: number;
}

export async function uploadSnapshot(
  dest: Destination,
  o: { generation: string; file: string; takenAtMs: number; database: 'sqlite' | 'postgres'; position: { epoch: number; frame: number } },
): Promise<SnapshotManifest> {
  const id = newBackupId(o.takenAtMs);
  const ext = snapshotFormat(o.database) === 'file' ? 'db' : 'dump';
  const object = keys.snapshot(o.generation, id, ext);
  const hash = createHash('sha256');
  let bytes = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  const source = createReadStream(o.file);
  source.on('error', (err) => tap.destroy(err));
  await dest.putStream(object, source.pipe(tap));
  const manifest: SnapshotManifest = {
    kind: 'snapshot',
    id,
    generation: o.generation,
    takenAt: new Date(o.takenAtMs).toISOString(),
    takenAtMs: o.takenAtMs,
    bytes,
    sha256: hash.digest('hex'),
    object,
    database: o.database,
    position: o.position,
  };
  await dest.put(keys.snapshotManifest(o.generation, id), sealManifest(manifest));
  return manifest;
}

export function infoOf(m: SnapshotManifest): SnapshotInfo {
  return { id: m.id, takenAt: m.takenAt, bytes: m.bytes };
}
