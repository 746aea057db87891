/**
 * Retention (docs/reference/backups.md): generations and snapshots older than `retainDays` go,
 * except what a restore at the start of the window still needs — the newest snapshot before the
 * cut of each generation, and the WAL epochs from its position on; and, when no kept generation
 * reaches back to the cut, the newest of those that ended before it. Then the WAL segments of
 * past hours are merged (compaction.ts), and photo objects no retained point in time needs go
 * (photo-gc.ts), after the snapshots that needed them.
 */
import { readCatalog } from './catalog.js';
import type { Destination } from './destination.js';
import { compactSegments } from './compaction.js';
import { keys } from './layout.js';
import { collectPhotos } from './photo-gc.js';

/** Compaction and photo collection running in the background, per destination (one at a time). */
const upkeep = new WeakMap<Destination, { running: boolean; error?: unknown }>();

async function compactAndCollect(dest: Destination, now: number): Promise<number> {
  // What is kept gets smaller: each past hour's small WAL segments merged into one; then photo
  // objects no retained moment needs.
  const compacted = await compactSegments(dest, { now });
  const photos = await collectPhotos(dest, now);
  return compacted.removed + photos.folded + photos.removed;
}

/**
 * Retention, then compaction and photo collection. Those two may read and write thousands of
 * objects (minutes on S3), so by default they run in the background: the continuous backup's tick
 * awaits this and must go back to shipping within its interval (the RPO). One runs at a time per
 * destination; a failure of one is thrown by the next call, so the tick logs it. `wait`: run them
 * before returning (tests, PostgreSQL mode, which has no tick to hold up).
 */
export async function prune(dest: Destination, retainDays: number, currentGeneration: string, now = Date.now(), o: { wait?: boolean } = {}): Promise<number> {
  if (o.wait) return (await retain(dest, retainDays, currentGeneration, now)) + (await compactAndCollect(dest, now));
  const state = upkeep.get(dest) ?? { running: false };
  upkeep.set(dest, state);
  if (state.error !== undefined) {
    const err = state.error;
    state.error = undefined;
    throw err;
  }
  // Still merging from the last run: retention waits for the next one rather than remove a
  // generation under a compaction of it.
  if (state.running) return 0;
  const removed = await retain(dest, retainDays, currentGeneration, now);
  state.running = true;
  void compactAndCollect(dest, now)
    .catch((err: unknown) => {
      state.error = err;
    })
    .finally(() => {
      state.running = false;
    });
  return removed;
}

async function retain(dest: Destination, retainDays: number, currentGeneration: string, now: number): Promise<number> {
  const cut = now - retainDays * 86_400_000;
  const c = await readCatalog(dest);
  let removed = 0;
  const remove = async (key: string) => {
    await dest.delete(key);
    removed++;
  };
  const ended = c.generations.filter((g) => g.id !== currentGeneration && g.syncedAt < cut);
  const reachesCut = c.generations.some((g) => !ended.includes(g) && g.snapshots[0]!.takenAtMs <= cut);
  // PostgreSQL makes a generation per snapshot: without this, the window would start after the cut.
  const lastEnded = reachesCut ? undefined : ended.reduce<(typeof ended)[number] | undefined>((a, g) => (!a || g.syncedAt > a.syncedAt ? g : a), undefined);
  for (const g of c.generations) {
    if (ended.includes(g) && g !== lastEnded) {
      // Manifests first: a half-removed generation is then never offered.
      for (const s of g.snapshots) await remove(keys.snapshotManifest(g.id, s.id));
      for (const o of await dest.list(keys.generation(g.id))) await remove(o.key);
      continue;
    }
    const old = g.snapshots.filter((s) => s.takenAtMs < cut);
    const keepFrom = old.at(-1);
    for (const s of old.slice(0, -1)) {
      await remove(keys.snapshotManifest(g.id, s.id));
      await remove(s.object);
    }
    if (!keepFrom) continue;
    for (const seg of g.segments) {
      if (seg.epoch >= keepFrom.position.epoch) break;
      await remove(seg.object.replace(/\.wal$/, '.json'));
      await remove(seg.object);
    }
  }
  return removed;
}
