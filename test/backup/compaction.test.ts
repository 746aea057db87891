/**
 * Segment compaction (docs/reference/backups.md, "Compaction"), on the WAL segments a real server
 * shipped: restores at several times give the same rows before and after the small segments are
 * merged (every commit time kept); a compaction killed between writing a merged segment and
 * removing the small ones leaves a backup that restores the same, and the next run finishes it;
 * a damaged merged segment is reported like any other.
 */
import Database from 'better-sqlite3';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readCatalog, type Catalog } from '../../src/backup/catalog.js';
import { compactSegments } from '../../src/backup/compaction.js';
import type { Destination } from '../../src/backup/destination.js';
import { FileDestination } from '../../src/backup/file-destination.js';
import { checkEveryObject, restoreSqliteInto } from '../../src/backup/restore.js';
import { Hooked } from '../../src/backup/test-support.js';
import { pause } from '../helpers/poll.js';
import { createRows, listRows, write } from '../helpers/rows.js';
import { startServer } from '../helpers/server.js';
import { backupScene, destination, newDataDir } from './helpers.js';

/** Segments of every generation, as `epoch:from-to`. */
const segmentsOf = (c: Catalog) => c.generations.flatMap((g) => g.segments.map((s) => `${s.epoch}:${s.from}-${s.to}`));
const commitsOf = (c: Catalog) => c.generations.flatMap((g) => g.segments.flatMap((s) => s.commits.map(([f, t]) => `${s.epoch}:${f}@${t}`))).sort();

describe('WAL segment compaction', () => {
  const { dest, servers, folders } = backupScene();

  /** The rows of `big` and the restored state's time, restored at `at`. */
  async function stateAt(d: Destination, at: number): Promise<{ stateAt: number; rows: unknown[] }> {
    const dir = newDataDir();
    folders.push(join(dir, '..'));
    const r = await restoreSqliteInto(d, dir, at);
    const db = new Database(join(dir, 'db.sqlite'), { readonly: true });
    try {
      return { stateAt: r.plan.stateAt, rows: db.prepare('SELECT id, payload FROM big ORDER BY id').all() };
    } finally {
      db.close();
    }
  }

  it('restores the same state at every time before and after merging, and after a crash mid-compaction', async () => {
    const s = await startServer({ args: ['--backup', dest.url] });
    servers.push(s);
    // Bursts of writes, each shipped as its own segment (syncIntervalMs: 1 s), with a time between each.
    const times: number[] = [];
    for (let i = 0; i < 6; i++) {
      const rows = await createRows(
        s,
        'big',
        Array.from({ length: 3 }, (_, j) => ({ payload: `burst-${i}-${j}` })),
      );
      await write(s, 'PATCH', '/db', { table: 'big', where: { id: { eq: rows[0]!.id } }, updates: [{ column: 'payload', value: `patched-${i}` }] });
      await pause(700);
      times.push(Date.now());
      await pause(700);
    }
    expect(await listRows(s, 'big')).toHaveLength(18);
    await pause(2_000);
    await s.stop();

    const d = new FileDestination(dest.dir);
    const before = await readCatalog(d);
    expect(segmentsOf(before).length, 'a segment per burst at least').toBeGreaterThanOrEqual(6);
    const states = [];
    for (const t of times) states.push(await stateAt(d, t));
    expect(states.map((x) => x.rows.length)).toEqual([3, 6, 9, 12, 15, 18]);

    // The same destination as it was, for the crash and the races below.
    const copy = () => {
      const c = destination();
      folders.push(c.dir);
      cpSync(dest.dir, c.dir, { recursive: true });
      return new FileDestination(c.dir);
    };
    const crashed = copy();
    const racedAtFetch = copy();
    const racedAtList = copy();

    // 3-second buckets (an hour in production), all of them past.
    const now = Date.now() + 3_600_000;
    const done = await compactSegments(d, { now, bucketMs: 3_000 });
    expect(done.merged).toBeGreaterThan(0);
    const after = await readCatalog(d);
    expect(segmentsOf(after).length).toBeLessThan(segmentsOf(before).length);
    expect(commitsOf(after)).toEqual(commitsOf(before));
    for (const [i, t] of times.entries()) expect(await stateAt(d, t)).toEqual(states[i]);
    expect(await checkEveryObject(d, after)).toBeGreaterThan(0);
    // A second run has nothing left to merge.
    expect(await compactSegments(d, { now, bucketMs: 3_000 })).toEqual({ merged: 0, removed: 0 });

    // Killed right after the first merged segment's manifest, before any small one went.
    const inner = crashed;
    const killed = new Hooked(inner, {
      beforeDelete: async (key) => {
        if (key.includes('/wal/')) throw new Error('killed');
      },
    });
    await expect(compactSegments(killed, { now, bucketMs: 3_000 })).rejects.toThrow('killed');
    const half = await readCatalog(inner);
    expect(segmentsOf(half).length, 'the merged segment sits beside the small ones').toBe(segmentsOf(before).length + 1);
    for (const [i, t] of times.entries()) expect(await stateAt(inner, t)).toEqual(states[i]);
    expect(await checkEveryObject(inner, half)).toBeGreaterThan(0);
    // The next run removes the leftovers and merges the rest.
    await compactSegments(inner, { now, bucketMs: 3_000 });
    expect(segmentsOf(await readCatalog(inner))).toEqual(segmentsOf(after));
    for (const [i, t] of times.entries()) expect(await stateAt(inner, t)).toEqual(states[i]);

    // Issue #21: a restore whose catalog named the small segments, racing a compaction that
    // replaced them before it fetched them: the first WAL object it fetches comes after the merge.
    let mergedUnder = 0;
    const atFetch = new Hooked(racedAtFetch, {
      beforeGet: async (key) => {
        if (key.endsWith('.wal') && mergedUnder === 0) mergedUnder = (await compactSegments(racedAtFetch, { now, bucketMs: 3_000 })).merged;
      },
    });
    expect(await stateAt(atFetch, times.at(-1)!)).toEqual(states.at(-1));
    expect(mergedUnder, 'the compaction ran between the listing and the fetch').toBeGreaterThan(0);
    // The same between the listing and the reading of the segment manifests it listed.
    mergedUnder = 0;
    const atList = new Hooked(racedAtList, {
      afterList: async (prefix) => {
        if (prefix === 'generations/' && mergedUnder === 0) mergedUnder = (await compactSegments(racedAtList, { now, bucketMs: 3_000 })).merged;
      },
    });
    expect(await stateAt(atList, times[2]!)).toEqual(states[2]);
    expect(mergedUnder).toBeGreaterThan(0);

    // Damage in a merged segment is found and named, as in a small one.
    const merged = after.generations.flatMap((g) => g.segments).find((x) => x.commits.length > 1 && !before.generations.some((g) => g.segments.some((y) => y.object === x.object)))!;
    const file = join(dest.dir, merged.object);
    const bytes = readFileSync(file);
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 100) ^ 0xff, bytes.length - 100);
    writeFileSync(file, bytes);
    const target = newDataDir();
    folders.push(join(target, '..'));
    await expect(restoreSqliteInto(d, target, times.at(-1))).rejects.toThrow(`backup damaged: ${merged.object} fails its checksum`);
  }, 240_000);
});
