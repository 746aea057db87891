/**
 * Segment compaction (docs/reference/backups.md, "Compaction"). Each sync tick with writes adds a
 * small WAL segment; once an hour has passed, this merges each hour's run of consecutive segments
 * of one epoch into one segment object whose manifest keeps every transaction's
 * `[commit frame, commit time]`, so a restore at any second still stops at the same commit.
 *
 * Order, so that a crash anywhere leaves a valid backup:
 * 1. every small segment is read and checked (size, sha256); a damaged one stops the compaction,
 *    so damage stays where verify and restore report it;
 * 2. the merged object is written, then its manifest (an object without one is never read, and is
 *    simply written again by the next run);
 * 3. each small segment's manifest is removed, then its object.
 * A crash after 2 leaves small segments inside the merged one: a restore uses the merged one
 * (plan.ts prefers the longest segment starting at a frame and skips those it covers), and the
 * next run removes the leftovers first.
 *
 * It runs from retention (retention.ts: hourly, in the background of the SQLite sync tick). It
 * reads only segments whose manifest exists (so whole ones), and merges a bucket only once it
 * ended SETTLE_MS ago: the segments this process is uploading beside it are newer, and one still
 * arriving for a past bucket (a lagging destination) is merged by a later run.
 */
import { readCatalog, type Generation } from './catalog.js';
import type { Destination } from './destination.js';
import { BackupDamaged, keys, sealManifest, sha256, type SegmentManifest } from './layout.js';

export const COMPACT_BUCKET_MS = 3_600_000;
const SETTLE_MS = 5 * 60_000;
/** A merged object holds at most this much WAL (a restore reads one epoch's segments into memory). */
const MAX_MERGED_BYTES = 64 * 1024 * 1024;

export interface Compaction {
  /** Merged segments written. */
  readonly merged: number;
  /** Small segments removed (object and manifest each count one). */
  readonly removed: number;
}

const manifestKey = (s: SegmentManifest) => s.object.replace(/\.wal$/, '.json');

/** Segments inside another segment of the same epoch: what an interrupted compaction left. */
function covered(segments: readonly SegmentManifest[]): Set<SegmentManifest> {
  const out = new Set<SegmentManifest>();
  // Sorted by epoch, then from, longest first (catalog.ts): one is inside an earlier one exactly
  // when an earlier one of its epoch reaches as far.
  let epoch = -1;
  let reach = 0;
  for (const s of segments) {
    if (s.epoch !== epoch) {
      epoch = s.epoch;
      reach = 0;
    }
    if (s.to <= reach) out.add(s);
    reach = Math.max(reach, s.to);
  }
  return out;
}

/** Runs of consecutive segments of one epoch and one time bucket, ready to merge (2 or more each). */
function runsOf(segments: readonly SegmentManifest[], bucketMs: number, before: number): SegmentManifest[][] {
  const runs: SegmentManifest[][] = [];
  let run: SegmentManifest[] = [];
  let runBucket = -1;
  let runBytes = 0;
  let lastTime = 0;
  const flush = () => {
    if (run.length > 1) runs.push(run);
    run = [];
    runBytes = 0;
  };
  for (const s of segments) {
    // A segment's time: its first commit's (one without commits takes the one before it).
    lastTime = s.commits[0]?.[1] ?? lastTime;
    const bucket = Math.floor(lastTime / bucketMs);
    const prev = run.at(-1);
    const joins = prev && prev.epoch === s.epoch && prev.to + 1 === s.from && prev.header === s.header && bucket === runBucket && runBytes + s.bytes <= MAX_MERGED_BYTES;
    if (!joins) flush();
    // Only buckets that ended a while ago: nothing more will arrive in them.
    if ((bucket + 1) * bucketMs > before) continue;
    run.push(s);
    runBucket = bucket;
    runBytes += s.bytes;
  }
  flush();
  return runs;
}

async function readChecked(dest: Destination, s: SegmentManifest): Promise<Buffer> {
  const data = await dest.get(s.object);
  if (!data) throw new BackupDamaged(s.object, 'is missing');
  if (data.length !== s.bytes) throw new BackupDamaged(s.object, `is truncated or changed (${data.length} of ${s.bytes} bytes)`);
  if (sha256(data) !== s.sha256) throw new BackupDamaged(s.object, 'fails its checksum (changed)');
  return data;
}

async function merge(dest: Destination, g: Generation, run: SegmentManifest[]): Promise<void> {
  const parts: Buffer[] = [];
  for (const s of run) parts.push(await readChecked(dest, s));
  const data = Buffer.concat(parts);
  const first = run[0]!;
  const last = run.at(-1)!;
  const object = keys.segment(g.id, first.epoch, first.from, last.to);
  const manifest: SegmentManifest = {
    kind: 'segment',
    generation: g.id,
    epoch: first.epoch,
    from: first.from,
    to: last.to,
    header: first.header,
    ...(first.previousEpochFrames !== undefined ? { previousEpochFrames: first.previousEpochFrames } : {}),
    bytes: data.length,
    sha256: sha256(data),
    object,
    commits: run.flatMap((s) => s.commits),
  };
  await dest.put(object, data);
  await dest.put(manifestKey(manifest), sealManifest(manifest));
}

/** Removes a segment: its manifest first, so no manifest ever names a missing object. */
async function removeSegment(dest: Destination, s: SegmentManifest): Promise<number> {
  await dest.delete(manifestKey(s));
  await dest.delete(s.object);
  return 2;
}

/** Merges the small segments of every generation's past buckets (`now`, `bucketMs`: tests pick them). */
export async function compactSegments(dest: Destination, o: { now?: number; bucketMs?: number } = {}): Promise<Compaction> {
  const now = o.now ?? Date.now();
  const bucketMs = o.bucketMs ?? COMPACT_BUCKET_MS;
  const catalog = await readCatalog(dest);
  let merged = 0;
  let removed = 0;
  for (const g of catalog.generations) {
    const leftovers = covered(g.segments);
    for (const s of leftovers) removed += await removeSegment(dest, s);
    const segments = g.segments.filter((s) => !leftovers.has(s));
    for (const run of runsOf(segments, bucketMs, now - SETTLE_MS)) {
      await merge(dest, g, run);
      merged++;
      for (const s of run) removed += await removeSegment(dest, s);
    }
  }
  return { merged, removed };
}
