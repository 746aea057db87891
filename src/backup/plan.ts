/**
 * Choosing what to restore for a time T (docs/reference/backups.md): in each generation, the
 * latest snapshot taken at or before T, then its WAL segments up to the last commit at or before
 * T; the generation whose result is latest wins. Gaps in the segment chain are damage; a segment
 * inside another (compaction.ts, interrupted) is skipped.
 */
import type { Catalog, Generation } from './catalog.js';
import { BackupDamaged, keys, type SegmentManifest, type SnapshotManifest } from './layout.js';

export interface EpochReplay {
  readonly epoch: number;
  readonly header: Buffer;
  readonly segments: SegmentManifest[];
  /** Replay frames 1..through of this epoch. */
  readonly through: number;
}

export interface RestorePlan {
  readonly generation: string;
  readonly snapshot: SnapshotManifest;
  readonly epochs: EpochReplay[];
  /** The time of the restored state (its last commit, or the snapshot). */
  readonly stateAt: number;
}

export function formatWindow(c: Catalog): string {
  if (c.earliest === null || c.latest === null) return 'the backup holds no snapshot yet';
  return `the restorable window is ${new Date(c.earliest).toISOString()} … ${new Date(c.latest).toISOString()}`;
}

function planGeneration(g: Generation, t: number): RestorePlan | null {
  const snapshot = [...g.snapshots].reverse().find((s) => s.takenAtMs <= t);
  if (!snapshot) return null;
  const pos = snapshot.position;
  // The last commit at or before t at or after the snapshot's position.
  let last: { epoch: number; frame: number; t: number } | null = null;
  for (const seg of g.segments) {
    if (seg.epoch < pos.epoch) continue;
    for (const [frame, ct] of seg.commits) {
      if (ct > t) break;
      if (seg.epoch === pos.epoch && frame < pos.frame) continue;
      last = { epoch: seg.epoch, frame, t: ct };
    }
  }
  const end = last ?? { epoch: pos.epoch, frame: pos.frame, t: snapshot.takenAtMs };
  const epochs: EpochReplay[] = [];
  for (let e = pos.epoch; e <= end.epoch; e++) {
    const segs = g.segments.filter((s) => s.epoch === e);
    const through = e === end.epoch ? end.frame : (segs.at(-1)?.to ?? 0);
    if (through === 0) continue;
    const used: SegmentManifest[] = [];
    let next = 1;
    for (const s of segs) {
      if (next > through) break;
      // Inside one already used: small segments an interrupted compaction left beside their merge.
      if (s.to < next) continue;
      if (s.from !== next) throw new BackupDamaged(keys.segment(g.id, e, next, s.from - 1), `is missing (WAL frames ${next}..${s.from - 1} of epoch ${e})`);
      used.push(s);
      next = s.to + 1;
    }
    if (next <= through) throw new BackupDamaged(keys.segment(g.id, e, next, through), `is missing (WAL frames ${next}..${through} of epoch ${e})`);
    const nextFirst = g.segments.find((s) => s.epoch === e + 1 && s.from === 1);
    if (e < end.epoch && nextFirst?.previousEpochFrames !== undefined && nextFirst.previousEpochFrames !== through) {
      throw new BackupDamaged(keys.segment(g.id, e, through + 1, nextFirst.previousEpochFrames), `is missing (the end of epoch ${e})`);
    }
    epochs.push({ epoch: e, header: Buffer.from(used[0]!.header, 'base64'), segments: used, through });
  }
  return { generation: g.id, snapshot, epochs, stateAt: end.t };
}

/** The plan for time `t`, or null when no generation covers it. */
export function planRestore(c: Catalog, t: number): RestorePlan | null {
  let best: RestorePlan | null = null;
  for (const g of c.generations) {
    const p = planGeneration(g, t);
    if (p && (!best || p.stateAt >= best.stateAt)) best = p;
  }
  return best;
}
