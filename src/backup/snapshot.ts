/**
 * Uploading a snapshot (docs/reference/backups.md): the object first, hashed as it streams, its
 * manifest last — a snapshot interrupted by kill -9 has no manifest and is never listed or used.
 */
import { createReadStream } from 'node:fs';
import type { Destination } from './destination.js';
import { hashingTap, keys, newBackupId, sealManifest, snapshotFormat, type SnapshotManifest } from './layout.js';

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
  const t = hashingTap();
  const source = createReadStream(o.file);
  source.on('error', (err) => t.tap.destroy(err));
  await dest.putStream(object, source.pipe(t.tap));
  const manifest: SnapshotManifest = {
    kind: 'snapshot',
    id,
    generation: o.generation,
    takenAt: new Date(o.takenAtMs).toISOString(),
    takenAtMs: o.takenAtMs,
    bytes: t.bytes(),
    sha256: t.sha256(),
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
