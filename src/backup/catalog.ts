/**
 * Reading what a destination holds (docs/reference/backups.md): every generation's snapshots and
 * WAL segments, the restorable window, and the photo log. Manifests are checked as they are read;
 * data objects are checked when a restore uses them (restore.ts).
 */
import type { Destination } from './destination.js';
import { BackupDamaged, FORMAT, FORMAT_KEY, openManifest, type PhotoLog, type SegmentManifest, type SnapshotManifest, type SyncedMarker } from './layout.js';

export interface Generation {
  readonly id: string;
  readonly snapshots: SnapshotManifest[];
  readonly segments: SegmentManifest[];
  /** Everything committed before this time reached the destination. */
  readonly syncedAt: number;
}

export interface Catalog {
  readonly generations: Generation[];
  readonly photoLogs: PhotoLog[];
  readonly earliest: number | null;
  readonly latest: number | null;
}

/** Runs `fn` over `items` with a few at a time in flight (S3 round trips). */
async function mapLimited<T, R>(items: readonly T[], fn: (t: T) => Promise<R>, limit = 8): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}

/** Replay order of photo logs: by time; at one time a folded (`base`) log last, as it holds the state after every log up to it. */
export function byLogOrder(a: PhotoLog, b: PhotoLog): number {
  return a.at - b.at || Number(a.base === true) - Number(b.base === true);
}

/** `segments: false` skips reading WAL segment manifests (listings for the dashboard: the window's end comes from synced.json). */
export async function readCatalog(dest: Destination, o: { segments?: boolean } = {}): Promise<Catalog> {
  const format = await dest.get(FORMAT_KEY);
  if (format) {
    const f = JSON.parse(format.toString('utf8')) as { version?: number };
    if (f.version !== FORMAT.version) throw new Error(`${FORMAT_KEY}: layout version ${String(f.version)} is not one this build reads (${FORMAT.version})`);
  }
  const objects = await dest.list('generations/');
  const byGen = new Map<string, { snapshots: string[]; segments: string[]; synced?: string }>();
  for (const o of objects) {
    const m = /^generations\/([^/]+)\/(.+)$/.exec(o.key);
    if (!m) continue;
    const g = byGen.get(m[1]!) ?? { snapshots: [], segments: [] };
    byGen.set(m[1]!, g);
    if (m[2] === 'synced.json') g.synced = o.key;
    else if (m[2]!.startsWith('snapshots/') && o.key.endsWith('.json')) g.snapshots.push(o.key);
    else if (m[2]!.startsWith('wal/') && o.key.endsWith('.json')) g.segments.push(o.key);
  }
  const generations: Generation[] = [];
  for (const [id, g] of [...byGen].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const snapshots = await mapLimited(g.snapshots, async (k) => openManifest<SnapshotManifest>(k, await dest.get(k), 'snapshot'));
    if (snapshots.length === 0) continue; // a generation whose first snapshot never finished: unusable
    const segments = o.segments === false ? [] : await mapLimited(g.segments, async (k) => openManifest<SegmentManifest>(k, await dest.get(k), 'segment'));
    snapshots.sort((a, b) => a.takenAtMs - b.takenAtMs);
    // The longest first among those starting at one frame: a merged segment (compaction.ts) before
    // the small ones it holds, when an interrupted compaction left both.
    segments.sort((a, b) => a.epoch - b.epoch || a.from - b.from || b.to - a.to);
    const synced = g.synced ? openManifest<SyncedMarker>(g.synced, await dest.get(g.synced), 'synced').at : 0;
    let lastCommit = 0;
    for (const s of segments) lastCommit = Math.max(lastCommit, s.commits.at(-1)?.[1] ?? 0);
    generations.push({ id, snapshots, segments, syncedAt: Math.max(synced, lastCommit, snapshots.at(-1)!.takenAtMs) });
  }
  const logKeys = o.segments === false ? [] : (await dest.list('photos/log/')).filter((x) => x.key.endsWith('.json'));
  const photoLogs = await mapLimited(logKeys, async (x) => openManifest<PhotoLog>(x.key, await dest.get(x.key), 'photos'));
  photoLogs.sort(byLogOrder);
  const earliest = generations.length ? Math.min(...generations.map((g) => g.snapshots[0]!.takenAtMs)) : null;
  const latest = generations.length ? Math.max(...generations.map((g) => g.syncedAt)) : null;
  return { generations, photoLogs, earliest, latest };
}

/** Snapshots of every generation, oldest first, as `backup list` and the dashboard show them. */
export function snapshotList(c: Catalog): { id: string; takenAt: string; bytes: number }[] {
  return c.generations
    .flatMap((g) => g.snapshots)
    .sort((a, b) => a.takenAtMs - b.takenAtMs)
    .map((s) => ({ id: s.id, takenAt: s.takenAt, bytes: s.bytes }));
}

export { BackupDamaged };
