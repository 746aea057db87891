/**
 * Photos in the backup (docs/reference/backups.md): each photo's bytes once, named by their
 * sha256, and a log of which photo ids appeared or disappeared when; so a photo deleted later is
 * still restorable at a time it existed, and unchanged bytes are never uploaded twice.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BlobStore } from '../photos/blob-store.js';
import type { Destination } from './destination.js';
import { BackupDamaged, keys, sealManifest, sha256, type PhotoEvent, type PhotoLog } from './layout.js';

/**
 * Longest a photo sync may take, from its listing to its log: photo-gc.ts folds only logs older
 * than twice this, so no log it folded past is written later.
 */
export const MAX_SYNC_MS = 10 * 60_000;

interface Held {
  readonly sha256: string;
  readonly bytes: number;
}

/** Which photo ids the log says existed at time `t`. */
export function photosAt(logs: readonly PhotoLog[], t: number): Map<string, Held> {
  const state = new Map<string, Held>();
  for (const log of logs) {
    if (log.at > t) break;
    if (log.base) state.clear();
    for (const e of log.events) {
      if ('deleted' in e) state.delete(e.id);
      else state.set(e.id, { sha256: e.sha256, bytes: e.bytes });
    }
  }
  return state;
}

/** The bytes of a photo id as first logged after `t` (a photo row committed just before T whose bytes were logged just after). */
export function photoLoggedAfter(logs: readonly PhotoLog[], id: string, t: number): Held | undefined {
  for (const log of logs) {
    if (log.at <= t) continue;
    for (const e of log.events) if (e.id === id && !('deleted' in e)) return { sha256: e.sha256, bytes: e.bytes };
  }
  return undefined;
}

/**
 * A stored original's bytes, read through the photo store whatever it is (a folder, a bucket, or
 * a database with this disk as a cache); null when it is gone (deleted while we looked).
 */
export async function readOriginal(store: BlobStore, id: string): Promise<Buffer | null> {
  if (store.openBlob) {
    const blob = await store.openBlob(id);
    if (!blob) return null;
    try {
      if (blob.size === 0) return Buffer.alloc(0);
      const parts: Buffer[] = [];
      for await (const chunk of await blob.read(0, blob.size - 1)) parts.push(chunk as Buffer);
      return Buffer.concat(parts);
    } finally {
      await blob.close();
    }
  }
  if (store.fetch && !(await store.fetch(id))) return null;
  return readFile(store.path(id)).catch((err: unknown) => {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  });
}

/** Every original's id the store holds now. */
async function listOriginals(store: BlobStore): Promise<string[]> {
  if (store.originals) return store.originals();
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.scan(cursor, 1000);
    ids.push(...page.ids.keys());
    cursor = page.next;
  } while (cursor !== undefined);
  return ids;
}

/**
 * Ships the photo store's changes: new ids (bytes once per hash) and removed ids. The store is
 * the server's own (`--storage`: a folder, S3, …), so every photo it holds reaches the backup.
 */
export class PhotoShipper {
  #dest: Destination;
  #store: BlobStore;
  #known: Map<string, Held>;
  #chunkMs: number;

  /** `chunkMs`: how long a sync reads photos before it writes what it has as a log (tests shorten it). */
  constructor(dest: Destination, store: BlobStore, known: Map<string, Held>, chunkMs = MAX_SYNC_MS / 2) {
    this.#dest = dest;
    this.#store = store;
    this.#known = known;
    this.#chunkMs = chunkMs;
  }

  /**
   * Ships what changed since the last call. The first log is at `at` (when the listing started);
   * a long sync (a first one over thousands of photos) writes a log every `chunkMs` as it goes,
   * each at the time its part started — later than the listing, which a restore allows for (a
   * photo row whose bytes were logged just after T, `photoLoggedAfter`).
   *
   * Two rules keep the destination's photo garbage collection (photo-gc.ts) from removing bytes a
   * log relies on: a log is never written more than MAX_SYNC_MS after its `at` (the collector
   * folds only logs older than twice that), and an object found already there (the same bytes
   * shipped before) is looked for again once the log naming it is written, and uploaded again if
   * a collection removed it meanwhile.
   */
  async sync(at: number): Promise<number> {
    const present = new Set(await listOriginals(this.#store));
    let partAt = at;
    let events: PhotoEvent[] = [];
    let added = new Map<string, Held>();
    let reused: { id: string; key: string; held: Held }[] = [];
    let total = 0;
    const flush = async (gone: readonly string[]) => {
      for (const id of gone) events.push({ id, deleted: true });
      if (events.length > 0) {
        if (Date.now() - partAt > MAX_SYNC_MS) throw new Error(`backup: a photo sync took over ${MAX_SYNC_MS / 60_000} minutes to log; it starts again`);
        const log: PhotoLog = { kind: 'photos', at: partAt, events };
        await this.#dest.put(keys.photoLog(partAt), sealManifest(log));
        for (const r of reused) {
          if ((await this.#dest.list(r.key)).some((o) => o.key === r.key)) continue;
          const data = await readOriginal(this.#store, r.id);
          if (data && sha256(data) === r.held.sha256) await this.#dest.put(r.key, data);
        }
        for (const [id, h] of added) this.#known.set(id, h);
        for (const id of gone) this.#known.delete(id);
        total += events.length;
      }
      events = [];
      added = new Map();
      reused = [];
      partAt = Date.now();
    };
    for (const id of present) {
      if (this.#known.has(id)) continue;
      const data = await readOriginal(this.#store, id);
      if (!data) continue; // deleted while we looked: nothing to keep
      const held: Held = { sha256: sha256(data), bytes: data.length };
      const key = keys.photo(held.sha256);
      const existing = await this.#dest.get(key);
      if (!existing || sha256(existing) !== held.sha256) await this.#dest.put(key, data);
      else reused.push({ id, key, held });
      events.push({ id, ...held });
      added.set(id, held);
      if (Date.now() - partAt > this.#chunkMs) await flush([]);
    }
    await flush([...this.#known.keys()].filter((id) => !present.has(id)));
    return total;
  }
}

/** Writes the photos `ids` into `photosDir`, each checked against its sha256. Returns ids the log does not hold. */
export async function restorePhotos(dest: Destination, logs: readonly PhotoLog[], t: number, ids: readonly string[] | null, photosDir: string): Promise<string[]> {
  await mkdir(photosDir, { recursive: true });
  const state = photosAt(logs, t);
  const missing: string[] = [];
  // With a `_photos` table, exactly its rows' photos; without one, whatever the log held at t.
  const wanted = ids ? new Set(ids) : null;
  for (const id of ids ?? []) {
    if (state.has(id)) continue;
    const later = photoLoggedAfter(logs, id, t);
    if (later) state.set(id, later);
    else missing.push(id);
  }
  for (const [id, held] of state) {
    if (wanted && !wanted.has(id)) continue;
    const key = keys.photo(held.sha256);
    const data = await dest.get(key);
    if (!data) throw new BackupDamaged(key, `is missing (photo ${id})`);
    if (data.length !== held.bytes) throw new BackupDamaged(key, `is truncated (photo ${id}: ${data.length} of ${held.bytes} bytes)`);
    if (sha256(data) !== held.sha256) throw new BackupDamaged(key, `fails its checksum (photo ${id})`);
    await writeFile(join(photosDir, id), data);
  }
  return missing;
}
