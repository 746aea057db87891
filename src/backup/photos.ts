/**
 * Photos in the backup (docs/reference/backups.md): each photo's bytes once, named by their
 * sha256, and a log of which photo ids appeared or disappeared when; so a photo deleted later is
 * still restorable at a time it existed, and unchanged bytes are never uploaded twice.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PHOTO_ID } from '../photos/blob-store.js';
import type { Destination } from './destination.js';
import { BackupDamaged, keys, sealManifest, sha256, type PhotoEvent, type PhotoLog } from './layout.js';

interface Held {
  readonly sha256: string;
  readonly bytes: number;
}

/** Which photo ids the log says existed at time `t`. */
export function photosAt(logs: readonly PhotoLog[], t: number): Map<string, Held> {
  const state = new Map<string, Held>();
  for (const log of logs) {
    if (log.at > t) break;
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

async function hashFile(file: string): Promise<Held> {
  const h = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(file)) {
    h.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { sha256: h.digest('hex'), bytes };
}

/** Ships the photo folder's changes: new ids (bytes once per hash) and removed ids. */
export class PhotoShipper {
  #dest: Destination;
  #dir: string;
  #known: Map<string, Held>;

  constructor(dest: Destination, photosDir: string, known: Map<string, Held>) {
    this.#dest = dest;
    this.#dir = photosDir;
    this.#known = known;
  }

  async sync(at: number): Promise<number> {
    let names: string[];
    try {
      names = (await readdir(this.#dir)).filter((n) => PHOTO_ID.test(n));
    } catch {
      names = [];
    }
    const present = new Set(names);
    const events: PhotoEvent[] = [];
    const added = new Map<string, Held>();
    for (const id of names) {
      if (this.#known.has(id)) continue;
      let held: Held;
      try {
        held = await hashFile(join(this.#dir, id));
      } catch {
        continue; // deleted while we looked: nothing to keep
      }
      const key = keys.photo(held.sha256);
      const existing = await this.#dest.get(key);
      if (!existing || sha256(existing) !== held.sha256) {
        const data = await readFile(join(this.#dir, id)).catch(() => null);
        if (!data || sha256(data) !== held.sha256) continue;
        await this.#dest.put(key, data);
      }
      events.push({ id, ...held });
      added.set(id, held);
    }
    const gone = [...this.#known.keys()].filter((id) => !present.has(id));
    for (const id of gone) events.push({ id, deleted: true });
    if (events.length === 0) return 0;
    const log: PhotoLog = { kind: 'photos', at, events };
    await this.#dest.put(keys.photoLog(at), sealManifest(log));
    for (const [id, h] of added) this.#known.set(id, h);
    for (const id of gone) this.#known.delete(id);
    return events.length;
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
