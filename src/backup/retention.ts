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

export async function prune(dest: Destination, retainDays: number, currentGeneration: string, now = Date.now()): Promise<number> {
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
  // Then what is kept gets smaller: each past hour's small WAL segments merged into one.
  const compacted = await compactSegments(dest, { now });
  const photos = await collectPhotos(dest, now);
  return removed + compacted.removed + photos.folded + photos.removed;
}
