/**
 * Retention (docs/reference/backups.md): generations and snapshots older than `retainDays` go,
 * except what a restore at the start of the window still needs — the newest snapshot before the
 * cut of each generation, and the WAL epochs from its position on. Photo objects are kept: they
 * are shared by content and small next to the database.
 */
import { readCatalog } from './catalog.js';
import type { Destination } from './destination.js';
import { keys } from './layout.js';

export async function prune(dest: Destination, retainDays: number, currentGeneration: string, now = Date.now()): Promise<number> {
  const cut = now - retainDays * 86_400_000;
  const c = await readCatalog(dest);
  let removed = 0;
  const remove = async (key: string) => {
    await dest.delete(key);
    removed++;
  };
  for (const g of c.generations) {
    if (g.id !== currentGeneration && g.syncedAt < cut) {
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
