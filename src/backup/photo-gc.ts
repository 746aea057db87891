/**
 * Garbage collection of photo objects at the destination (docs/reference/backups.md,
 * "Retention"). Photo bytes are shared by content (photos.ts), so retention cannot remove them
 * with the snapshots; this runs after it, in two steps:
 *
 * 1. Fold: every photo log at or before F — the start of the restorable window, or
 *    `now - SETTLE_MS` if that is earlier — is replaced by one `base` log at F holding the photos
 *    of that moment (written first, then the old logs removed; one left beside them gives the
 *    same state, catalog.ts's byLogOrder). A restore at any T ≥ F replays the same state.
 * 2. Sweep: an object is needed when the base log or any later log names its sha256 (a restore at
 *    T ≥ F reads only those: the state at T, or bytes logged just after T). Any other object goes
 *    — but only after the logs have been listed again and no new one names it, so a sync of
 *    another process that just found the same bytes already there keeps them.
 *
 * The race with a sync (this process's next tick, or another process's — a `backup create`, a
 * second server — may run at the same time):
 * - A sync's log is written at most MAX_SYNC_MS after its `at` (photos.ts refuses otherwise), and
 *   F is at least SETTLE_MS = 2 × MAX_SYNC_MS in the past, so no log at or before F appears after
 *   the fold (it would be hidden behind the base).
 * - A sync that finds an object already there names it in its log, then looks for it again and
 *   uploads it again if it is gone. The sweep reads the logs again right before each delete. For
 *   bytes to be lost, a sweep's listing-then-delete would have to straddle a whole sync's
 *   log-then-check; and only for bytes identical to a photo deleted before the window.
 */
import { readCatalog, byLogOrder } from './catalog.js';
import type { Destination } from './destination.js';
import { keys, openManifest, sealManifest, type PhotoLog } from './layout.js';
import { MAX_SYNC_MS, photosAt } from './photos.js';

export const SETTLE_MS = 2 * MAX_SYNC_MS;
const LOG_PREFIX = 'photos/log/';
const OBJECT = /^photos\/objects\/[0-9a-f]{2}\/([0-9a-f]{64})$/;

interface KeyedLog {
  readonly key: string;
  readonly log: PhotoLog;
}

/** Logs not yet in `seen` (each checked; a damaged one stops the collection: nothing is removed then). */
async function readNewLogs(dest: Destination, seen: Set<string>): Promise<KeyedLog[]> {
  const out: KeyedLog[] = [];
  for (const o of await dest.list(LOG_PREFIX)) {
    if (!o.key.endsWith('.json') || seen.has(o.key)) continue;
    seen.add(o.key);
    out.push({ key: o.key, log: openManifest<PhotoLog>(o.key, await dest.get(o.key), 'photos') });
  }
  return out;
}

function namedBy(log: PhotoLog, into: Set<string>): void {
  for (const e of log.events) if (!('deleted' in e)) into.add(e.sha256);
}

export interface PhotoCollection {
  /** Logs replaced by a base log. */
  readonly folded: number;
  /** Photo objects removed. */
  readonly removed: number;
}

/** Folds old photo logs and removes the photo objects no retained point in time needs. */
export async function collectPhotos(dest: Destination, now = Date.now()): Promise<PhotoCollection> {
  const catalog = await readCatalog(dest, { segments: false });
  // No snapshot: nothing is restorable, and what is shipped now is for the first one.
  if (catalog.earliest === null) return { folded: 0, removed: 0 };
  const fold = Math.min(catalog.earliest, now - SETTLE_MS);
  const seen = new Set<string>();
  let logs = await readNewLogs(dest, seen);
  logs.sort((a, b) => byLogOrder(a.log, b.log));
  const before = logs.filter((l) => l.log.at <= fold);
  let folded = 0;
  if (before.length > 1 || (before.length === 1 && !before[0]!.log.base)) {
    const state = photosAt(
      logs.map((l) => l.log),
      fold,
    );
    const base: PhotoLog = { kind: 'photos', at: fold, base: true, events: [...state].map(([id, h]) => ({ id, sha256: h.sha256, bytes: h.bytes })) };
    const key = keys.photoLog(fold);
    await dest.put(key, sealManifest(base));
    seen.add(key);
    for (const l of before) await dest.delete(l.key);
    folded = before.length;
    logs = [{ key, log: base }, ...logs.filter((l) => l.log.at > fold)];
  }
  const needed = new Set<string>();
  for (const l of logs) namedBy(l.log, needed);
  let removed = 0;
  for (const o of await dest.list('photos/objects/')) {
    const hash = OBJECT.exec(o.key)?.[1];
    if (!hash || needed.has(hash)) continue;
    // Listed again right before the delete: a sync that just reused these bytes has named them.
    for (const l of await readNewLogs(dest, seen)) namedBy(l.log, needed);
    if (needed.has(hash)) continue;
    await dest.delete(o.key);
    removed++;
  }
  return { folded, removed };
}
