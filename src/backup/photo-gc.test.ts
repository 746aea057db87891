/**
 * Photo garbage collection at the destination (photo-gc.ts, docs/reference/backups.md
 * "Retention"), on a real folder destination: retention removes the photo objects no retained
 * point in time needs and folds the old photo logs, with every retained moment's photos unchanged;
 * a sync racing the sweep keeps its bytes; a prune interrupted mid-fold leaves a backup that
 * restores the same photos.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FsBlobStore } from '../photos/blob-store.js';
import { readCatalog } from './catalog.js';
import type { Destination } from './destination.js';
import { FileDestination } from './file-destination.js';
import { FORMAT, FORMAT_KEY, keys, newBackupId, sealManifest, sha256, type PhotoEvent } from './layout.js';
import { PhotoShipper, photosAt, restorePhotos } from './photos.js';
import { checkEveryObject } from './restore.js';
import { prune } from './retention.js';
import { uploadSnapshot } from './snapshot.js';
import { Hooked } from './test-support.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 1);
const NOW = T0 + 10 * DAY;
const bytes = { a: Buffer.from('photo a'), b: Buffer.from('photo b'), c: Buffer.from('photo c'), d: Buffer.from('photo d') };
const ids = { A: 'ph_aaaaaaaaaaaaaaaa', B: 'ph_bbbbbbbbbbbbbbbb', C: 'ph_cccccccccccccccc', D: 'ph_dddddddddddddddd', E: 'ph_eeeeeeeeeeeeeeee' };
const add = (id: string, data: Buffer): PhotoEvent => ({ id, sha256: sha256(data), bytes: data.length });

describe('photo garbage collection at the destination', () => {
  const folders: string[] = [];
  afterAll(() => {
    for (const f of folders) rmSync(f, { recursive: true, force: true });
  });
  const folder = () => {
    const d = mkdtempSync(join(tmpdir(), 'tb-photo-gc-'));
    folders.push(d);
    return d;
  };

  /**
   * Four PostgreSQL-style snapshots (days 0, 3, 6, 9) and a photo history: A and B on day 0, B
   * deleted and C added on day 2, D added and A deleted on day 5. With 5 days kept, the window
   * starts at the day-3 snapshot; B's bytes are needed by no moment of it.
   */
  async function scene(): Promise<{ dest: FileDestination; dir: string }> {
    const dir = folder();
    const dest = new FileDestination(dir);
    await dest.put(FORMAT_KEY, Buffer.from(JSON.stringify(FORMAT)));
    const dump = join(folder(), 'dump.jsonl');
    writeFileSync(dump, '{"kind":"header"}\n');
    for (const day of [0, 3, 6, 9]) {
      const t = T0 + day * DAY + 1000;
      await uploadSnapshot(dest, { generation: newBackupId(t), file: dump, takenAtMs: t, database: 'postgres', position: { epoch: 0, frame: 0 } });
    }
    for (const data of Object.values(bytes)) await dest.put(keys.photo(sha256(data)), data);
    const log = async (at: number, events: PhotoEvent[]) => dest.put(keys.photoLog(at), sealManifest({ kind: 'photos', at, events }));
    await log(T0 + 1, [add(ids.A, bytes.a), add(ids.B, bytes.b)]);
    await log(T0 + 2 * DAY, [{ id: ids.B, deleted: true }, add(ids.C, bytes.c)]);
    await log(T0 + 5 * DAY, [add(ids.D, bytes.d), { id: ids.A, deleted: true }]);
    return { dest, dir };
  }

  /** What each moment of the window (from the day-3 snapshot on) restores: id → sha256. */
  const moments = [T0 + 3 * DAY + 1000, T0 + 4 * DAY, T0 + 5 * DAY - 1, T0 + 5 * DAY, T0 + 9 * DAY + 1000];
  async function photosOfWindow(dest: Destination) {
    const logs = (await readCatalog(dest)).photoLogs;
    return moments.map((t) => Object.fromEntries([...photosAt(logs, t)].map(([id, h]) => [id, h.sha256])));
  }

  const exists = async (dest: Destination, data: Buffer) => (await dest.get(keys.photo(sha256(data)))) !== null;
  const logCount = async (dest: Destination) => (await dest.list('photos/log/')).length;

  it('removes the objects no retained moment needs, folds old logs, and every retained moment restores the same photos', async () => {
    const { dest } = await scene();
    const before = await photosOfWindow(dest);
    expect(before[0]).toEqual({ [ids.A]: sha256(bytes.a), [ids.C]: sha256(bytes.c) });

    const removed = await prune(dest, 5, '', NOW, { wait: true });
    const c = await readCatalog(dest);
    // Day 0's snapshot went; day 3's stays: it is what a restore at the window's start uses.
    expect(c.generations.map((g) => g.snapshots[0]!.takenAtMs)).toEqual([3, 6, 9].map((d) => T0 + d * DAY + 1000));
    expect(await exists(dest, bytes.b)).toBe(false);
    for (const data of [bytes.a, bytes.c, bytes.d]) expect(await exists(dest, data)).toBe(true);
    // The two logs before the window became one base log; day 5's stays.
    expect(await logCount(dest)).toBe(2);
    expect(removed).toBe(2 /* day 0: snapshot and manifest */ + 2 /* logs folded */ + 1 /* b */);
    expect(await photosOfWindow(dest)).toEqual(before);
    expect(await checkEveryObject(dest, c)).toBeGreaterThan(0);
    const out = folder();
    expect(await restorePhotos(dest, c.photoLogs, moments[0]!, [ids.A, ids.C], out)).toEqual([]);

    // Idempotent: a second run finds nothing to do.
    expect(await prune(dest, 5, '', NOW, { wait: true })).toBe(0);
    // Keeping 3.5 days, the window starts at day 6: A's bytes (deleted on day 5) go too.
    await prune(dest, 3.5, '', NOW, { wait: true });
    expect(await exists(dest, bytes.a)).toBe(false);
    expect(await exists(dest, bytes.c)).toBe(true);
    expect(await logCount(dest)).toBe(1);
    const late = await readCatalog(dest);
    expect(Object.fromEntries([...photosAt(late.photoLogs, T0 + 6 * DAY + 1000)].map(([id, h]) => [id, h.sha256]))).toEqual({ [ids.C]: sha256(bytes.c), [ids.D]: sha256(bytes.d) });
  });

  it('keeps bytes a sync of another process names while the sweep runs', async () => {
    const { dest: inner } = await scene();
    let injected = false;
    // Right after the sweep lists the objects, a sync elsewhere logs photo E, whose bytes equal B's
    // (it found them already there and did not upload them).
    const dest = new Hooked(inner, {
      afterList: async (prefix) => {
        if (prefix !== 'photos/objects/' || injected) return;
        injected = true;
        await inner.put(keys.photoLog(NOW), sealManifest({ kind: 'photos', at: NOW, events: [add(ids.E, bytes.b)] }));
      },
    });
    await prune(dest, 5, '', NOW, { wait: true });
    expect(injected).toBe(true);
    expect(await exists(inner, bytes.b)).toBe(true);
    expect(await checkEveryObject(inner, await readCatalog(inner))).toBeGreaterThan(0);
  });

  it('a sync whose reused bytes are removed before its log lands uploads them again', async () => {
    const { dest: inner } = await scene();
    const root = folder();
    const store = new FsBlobStore(root);
    writeFileSync(join(root, ids.E), bytes.b); // same bytes as the long-deleted B: the object is there
    const dest = new Hooked(inner, {
      // A collection elsewhere removes the object between the sync's look and its log.
      beforePut: async (key) => {
        if (key.startsWith('photos/log/')) await inner.delete(keys.photo(sha256(bytes.b)));
      },
    });
    const shipper = new PhotoShipper(dest, store, new Map());
    expect(await shipper.sync(Date.now())).toBe(1);
    expect((await inner.get(keys.photo(sha256(bytes.b))))?.equals(bytes.b)).toBe(true);
  });

  it('a long sync writes its log in parts as it goes, and ships every photo', async () => {
    const { dest } = await scene();
    const root = folder();
    /** A store whose every read takes 30 ms (a slow bucket). */
    class Slow extends FsBlobStore {
      async fetch(): Promise<boolean> {
        await new Promise((r) => setTimeout(r, 30));
        return true;
      }
    }
    const shipped = Array.from({ length: 6 }, (_, i) => ({ id: `ph_slow${String(i).padStart(12, '0')}`, data: Buffer.from(`slow photo ${i}`) }));
    for (const p of shipped) writeFileSync(join(root, p.id), p.data);
    const logsBefore = await logCount(dest);
    const start = Date.now();
    expect(await new PhotoShipper(dest, new Slow(root), new Map(), 50).sync(start)).toBe(6);
    const c = await readCatalog(dest);
    const parts = c.photoLogs.filter((l) => l.at >= start);
    expect(await logCount(dest)).toBe(logsBefore + parts.length);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts[0]!.at).toBe(start);
    const now = photosAt(c.photoLogs, Infinity);
    for (const p of shipped) expect(now.get(p.id)?.sha256).toBe(sha256(p.data));
  });

  it('a prune interrupted mid-fold leaves the same photos at every moment, and the next run finishes', async () => {
    const { dest: inner } = await scene();
    const before = await photosOfWindow(inner);
    let fail = true;
    const dest = new Hooked(inner, {
      beforeDelete: async (key) => {
        if (fail && key.startsWith('photos/log/')) throw new Error('killed');
      },
    });
    await expect(prune(dest, 5, '', NOW, { wait: true })).rejects.toThrow('killed');
    // The base log sits beside the logs it replaces: same state, nothing removed yet.
    expect(await logCount(inner)).toBe(4);
    expect(await photosOfWindow(inner)).toEqual(before);
    expect(await exists(inner, bytes.b)).toBe(true);
    expect(await checkEveryObject(inner, await readCatalog(inner))).toBeGreaterThan(0);
    fail = false;
    await prune(dest, 5, '', NOW, { wait: true });
    expect(await photosOfWindow(inner)).toEqual(before);
    expect(await exists(inner, bytes.b)).toBe(false);
    expect(await logCount(inner)).toBe(2);
  });
});
