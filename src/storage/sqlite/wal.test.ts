/**
 * The WAL follower and guard against a real SQLite file: commits found and dated, torn or stale
 * frames refused, restore by SQLite's own recovery, and the checkpoint's coordination between the
 * writer's thread (WalGuard) and the follower (which runs on the backup's worker thread).
 */
import Database from 'better-sqlite3';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WalFollower } from './wal.js';
import { WalGuard } from './wal-guard.js';
import { parseWalHeader, parseWalIndex, scanFrames, walChecksum, WAL_HEADER_BYTES } from './wal-format.js';
import { applyWal, finishDatabase } from './wal-restore.js';
import { restoredRows, walDatabases } from './wal-fixtures.js';

const fresh = walDatabases();

describe('WalFollower', () => {
  it('finds each commit, dates it by its note, and its frames restore the database', async () => {
    const { dir, file, db } = fresh();
    const g = new WalGuard(file);
    const f = new WalFollower(file);
    f.scan();
    const base = join(dir, 'base.sqlite');
    db.pragma('wal_checkpoint(TRUNCATE)');
    const c = g.checkpoint(f.end);
    f.appendTail(c!.tail, c!.marks);
    const ro = new Database(file, { readonly: true });
    await ro.backup(base);
    ro.close();
    db.prepare('INSERT INTO t VALUES (?)').run('one');
    g.noteCommit(1000);
    db.prepare('INSERT INTO t VALUES (?)').run('two');
    g.noteCommit(2000);
    f.noteMarks(g.takeMarks());
    f.scan(9999);
    expect(f.commits.map((c) => c.t).slice(-2)).toEqual([1000, 2000]);
    const frames = f.readFrames(1, f.frames);
    const restored = join(dir, 'restored.sqlite');
    // Restore from a copy of the base: both commits come back.
    db.close();
    f.close();
    g.close();
    const copy = readFileSync(base);
    writeFileSync(restored, copy);
    applyWal(restored, f.headerBytes!, frames);
    finishDatabase(restored);
    const r = new Database(restored, { readonly: true });
    expect(r.prepare('SELECT x FROM t ORDER BY x').all()).toEqual([{ x: 'one' }, { x: 'two' }]);
    r.close();
  });

  it('stops at a changed byte (checksum) and at frames of another WAL (salts)', () => {
    const { file, db } = fresh();
    db.prepare('INSERT INTO t VALUES (?)').run('a');
    db.prepare('INSERT INTO t VALUES (?)').run('b');
    const wal = readFileSync(`${file}-wal`);
    const h = parseWalHeader(wal)!;
    const frames = wal.subarray(WAL_HEADER_BYTES);
    const whole = scanFrames(frames, h, h.checksum);
    expect(whole.commitFrames.length).toBeGreaterThanOrEqual(2);
    const changed = Buffer.from(frames);
    changed.writeUInt8(changed.readUInt8(124) ^ 0xff, 124);
    expect(scanFrames(changed, h, h.checksum).committedFrames).toBe(0);
    expect(scanFrames(frames, { ...h, salt1: h.salt1 + 1 }, h.checksum).committedFrames).toBe(0);
    db.close();
  });

  it('checksums the same through the fast (aligned, native order) and the DataView path', () => {
    const { file, db } = fresh();
    db.prepare('INSERT INTO t VALUES (?)').run('x'.repeat(3000));
    const wal = readFileSync(`${file}-wal`);
    const h = parseWalHeader(wal)!;
    const aligned = Buffer.from(wal.subarray(WAL_HEADER_BYTES));
    const shifted = Buffer.alloc(aligned.length + 1).subarray(1);
    aligned.copy(shifted);
    expect(shifted.byteOffset % 4).not.toBe(0);
    expect(walChecksum(shifted, h.bigEndian, h.checksum)).toEqual(walChecksum(aligned, h.bigEndian, h.checksum));
    expect(walChecksum(shifted, !h.bigEndian, [1, 2])).toEqual(walChecksum(aligned, !h.bigEndian, [1, 2]));
    db.close();
  });
});

describe('the follower reads into reused memory', () => {
  /** Frames `from..to` (1-based) as they are in the -wal file now. */
  const onDisk = (file: string, from: number, to: number, pageSize: number) =>
    readFileSync(`${file}-wal`).subarray(WAL_HEADER_BYTES + (from - 1) * (24 + pageSize), WAL_HEADER_BYTES + to * (24 + pageSize));

  it('never reuses memory the caller still holds: frames read stay intact until recycle()', () => {
    const { file, db } = fresh();
    const f = new WalFollower(file);
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    for (let i = 0; i < 20; i++) insert.run(`a${i}${'y'.repeat(3000)}`);
    f.scan();
    const first = f.readFrames(1, f.frames);
    const firstTo = f.frames;
    const copy = Buffer.from(first);
    f.release(firstTo);
    // Not recycled (the shipper has not uploaded `first` yet): later reads go elsewhere.
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 20; i++) insert.run(`b${round}-${i}${'y'.repeat(3000)}`);
      f.scan();
      expect(f.readFrames(firstTo + 1, f.frames).equals(onDisk(file, firstTo + 1, f.frames, f.pageSize))).toBe(true);
    }
    expect(first.equals(copy)).toBe(true);
    // Recycled: the next read reuses the memory, and is still exactly the WAL's bytes.
    f.release(f.frames);
    f.recycle();
    const before = f.frames;
    for (let i = 0; i < 20; i++) insert.run(`c${i}${'y'.repeat(3000)}`);
    f.scan();
    expect(f.readFrames(before + 1, f.frames).equals(onDisk(file, before + 1, f.frames, f.pageSize))).toBe(true);
    db.close();
    f.close();
  });

  it('reads frames of a transaction still open again once it commits, next to the ones before (one part, exact bytes)', () => {
    const { file, db } = fresh();
    const f = new WalFollower(file);
    db.prepare('INSERT INTO t VALUES (?)').run('before');
    f.scan();
    const start = f.frames;
    // A transaction larger than the page cache spills frames into the WAL before its COMMIT.
    db.pragma('cache_size = 2');
    db.exec('BEGIN');
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    for (let i = 0; i < 50; i++) insert.run(`open-${i}-${'q'.repeat(2000)}`);
    const spilled = statSync(`${file}-wal`).size;
    f.scan();
    expect(statSync(`${file}-wal`).size).toBe(spilled);
    expect(spilled, 'frames of the open transaction are in the WAL').toBeGreaterThan(WAL_HEADER_BYTES + (start + 2) * (24 + f.pageSize));
    expect(f.frames, 'none of them is taken before the COMMIT').toBe(start);
    db.exec('COMMIT');
    f.scan();
    expect(f.frames).toBeGreaterThan(start);
    expect(f.readFrames(1, f.frames).equals(onDisk(file, 1, f.frames, f.pageSize))).toBe(true);
    db.close();
    f.close();
  });
});

describe('a checkpoint while writes go on (WalGuard with the follower on another thread)', () => {
  /** What a backup ships: per epoch, its header and frames in order. */
  function shipper(f: WalFollower) {
    const epochs = new Map<number, { header: Buffer; parts: Buffer[] }>();
    let copied = { epoch: 0, frame: 0 };
    return {
      epochs,
      copy() {
        if (f.epoch === 0) return;
        const from = copied.epoch === f.epoch ? copied.frame + 1 : 1;
        if (f.frames < from) return;
        const e = epochs.get(f.epoch) ?? { header: f.headerBytes!, parts: [] };
        epochs.set(f.epoch, e);
        e.parts.push(Buffer.from(f.readFrames(from, f.frames)));
        f.release(f.frames);
        copied = { epoch: f.epoch, frame: f.frames };
      },
    };
  }

  it("never drops a frame: commits between the follower's read and the checkpoint go with it as the tail, and a restore equals the source", async () => {
    const { dir, file, db } = fresh();
    const g = new WalGuard(file);
    const f = new WalFollower(file);
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    const write = (n: number, tag: string) => {
      for (let i = 0; i < n; i++) {
        // Over a page: each row has an overflow page of its own, written once, so a frame lost is
        // not repaired by a later image of the same page.
        insert.run(`${tag}-${i}-${'z'.repeat(5000)}`);
        g.noteCommit();
      }
    };
    // The base: everything checkpointed into the file.
    f.scan();
    const first = g.checkpoint(f.end)!;
    f.appendTail(first.tail, first.marks);
    const base = join(dir, 'base.sqlite');
    const ro = new Database(file, { readonly: true });
    await ro.backup(base);
    ro.close();
    const s = shipper(f);
    let tails = 0;
    let restarts = 0;
    for (let round = 0; round < 12; round++) {
      write(5, `a${round}`);
      // The follower reads (on its thread, once per sync)...
      f.noteMarks(g.takeMarks());
      f.scan();
      s.copy();
      // ...the writer commits more before the main thread gets to its checkpoint...
      write(round % 3, `b${round}`);
      const r = g.checkpoint(f.end);
      expect(r, 'only this process wrote: the checkpoint may run').not.toBeNull();
      if (r!.tail.length > 0) tails++;
      if (r!.restarted) restarts++;
      f.appendTail(r!.tail, r!.marks);
      s.copy();
    }
    write(3, 'last');
    f.noteMarks(g.takeMarks());
    f.scan();
    s.copy();
    expect(tails).toBeGreaterThan(0);
    expect(restarts).toBeGreaterThan(0);
    expect(s.epochs.size).toBeGreaterThan(1);
    const source = db.prepare('SELECT x FROM t ORDER BY rowid').all();
    db.close();
    f.close();
    g.close();
    const epochs = [...s.epochs].sort((a, b) => a[0] - b[0]).map(([, e]) => ({ header: e.header, frames: Buffer.concat(e.parts) }));
    expect(restoredRows(dir, base, epochs)).toEqual(source);
  });

  it('reuses the WAL in place: the next commits start an epoch over the old frames, marked by their committed end, and only they are read', () => {
    const { file, db } = fresh();
    const g = new WalGuard(file);
    const f = new WalFollower(file);
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    for (let i = 0; i < 20; i++) {
      insert.run(`old-${i}-${'o'.repeat(5000)}`);
      g.noteCommit();
    }
    f.noteMarks(g.takeMarks());
    f.scan();
    const r = g.checkpoint(f.end);
    expect(r?.restarted).toBe(true);
    f.appendTail(r!.tail, r!.marks);
    const epoch = f.epoch;
    const reused = statSync(`${file}-wal`).size;
    insert.run('new');
    g.noteCommit(5000);
    const marks = g.takeMarks();
    expect(statSync(`${file}-wal`).size, 'not truncated: rewritten from its first frame').toBe(reused);
    const fsize = 24 + f.pageSize;
    expect(marks.sizes[0], 'the mark is where the committed frames end, not the file size').toBeLessThan(reused);
    f.noteMarks(marks);
    f.scan(9999);
    expect(f.epoch).toBe(epoch + 1);
    expect(f.lost).toBe(false);
    expect(WAL_HEADER_BYTES + f.frames * fsize, "the stale frames past the new epoch's end are not read").toBe(marks.sizes[0]);
    expect(f.commits.at(-1)).toEqual({ epoch: epoch + 1, frame: f.frames, t: 5000 });
    expect(f.readFrames(1, f.frames).equals(readFileSync(`${file}-wal`).subarray(WAL_HEADER_BYTES, WAL_HEADER_BYTES + f.frames * fsize))).toBe(true);
    db.close();
    f.close();
    g.close();
  });

  it('reads the WAL index only when both copies of its header agree (else a writer is updating it)', () => {
    const { file, db } = fresh();
    db.prepare('INSERT INTO t VALUES (?)').run('a');
    const shm = readFileSync(`${file}-shm`);
    const ix = parseWalIndex(shm);
    expect(ix?.frames).toBe((statSync(`${file}-wal`).size - WAL_HEADER_BYTES) / (24 + ix!.pageSize));
    expect(ix?.salt1).toBe(parseWalHeader(readFileSync(`${file}-wal`))!.salt1);
    const torn = Buffer.from(shm);
    torn.writeUInt8(torn.readUInt8(48 + 16) ^ 1, 48 + 16);
    expect(parseWalIndex(torn)).toBeNull();
    db.close();
  });

  it("takes another process's commit that lands between its check and the checkpoint: the checkpoint's own count finds it, and it goes with the tail", async () => {
    const { dir, file, db } = fresh();
    let other: Database.Database | undefined;
    const g = new WalGuard(file, {
      afterCheck: () => {
        other ??= new Database(file);
        other.prepare('INSERT INTO t VALUES (?)').run(`theirs-${'t'.repeat(5000)}`);
      },
    });
    const f = new WalFollower(file);
    const base = join(dir, 'base.sqlite');
    await db.backup(base);
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    insert.run(`ours-${'o'.repeat(5000)}`);
    g.noteCommit();
    f.noteMarks(g.takeMarks());
    f.scan();
    insert.run('ours, after the read');
    g.noteCommit();
    const checked = f.frames;
    const r = g.checkpoint(f.end)!;
    expect(r.restarted).toBe(true);
    expect(r.frames, "the checkpoint moved more frames than were checked: the other connection's").toBeGreaterThan(checked + 1);
    f.appendTail(r.tail, r.marks);
    expect(f.frames, 'every frame the checkpoint moved is with the follower').toBe(r.frames);
    const frames = Buffer.from(f.readFrames(1, f.frames));
    const header = Buffer.from(f.headerBytes!);
    // The next write starts the WAL over, in place, over the frames just taken.
    insert.run('next');
    const source = db.prepare('SELECT x FROM t ORDER BY rowid').all().slice(0, -1);
    expect(source.map((x) => String((x as { x: string }).x).slice(0, 6))).toEqual(['ours-o', 'ours, ', 'theirs']);
    other!.close();
    db.close();
    f.close();
    g.close();
    expect(restoredRows(dir, base, [{ header, frames }])).toEqual(source);
  });

  it('names the frames a commit of another process brought when they are too many to take: the follower falls short of them (a new generation)', () => {
    const { file, db } = fresh();
    const g = new WalGuard(file, {
      afterCheck: () => {
        const other = new Database(file);
        other.prepare('INSERT INTO t VALUES (?)').run('b'.repeat(9 * 1024 * 1024));
        other.close();
      },
    });
    const f = new WalFollower(file);
    db.prepare('INSERT INTO t VALUES (?)').run('ours');
    g.noteCommit();
    f.noteMarks(g.takeMarks());
    f.scan();
    const r = g.checkpoint(f.end)!;
    expect(r.restarted).toBe(true);
    f.appendTail(r.tail, r.marks);
    expect(f.frames).toBeLessThan(r.frames);
    db.close();
    f.close();
    g.close();
  });

  it('refuses while frames it cannot vouch for follow (another connection wrote after our last commit)', () => {
    const { file, db } = fresh();
    const g = new WalGuard(file);
    const f = new WalFollower(file);
    db.prepare('INSERT INTO t VALUES (?)').run('ours');
    g.noteCommit();
    f.noteMarks(g.takeMarks());
    f.scan();
    const other = new Database(file);
    other.prepare('INSERT INTO t VALUES (?)').run('theirs');
    other.close();
    const before = statSync(`${file}-wal`).size;
    expect(g.checkpoint(f.end)).toBeNull();
    expect(statSync(`${file}-wal`).size).toBe(before);
    // Once the follower has read them, it may.
    f.scan();
    const r = g.checkpoint(f.end);
    expect(r?.tail.length).toBe(0);
    expect(r?.restarted).toBe(true);
    db.close();
    f.close();
    g.close();
  });
});
