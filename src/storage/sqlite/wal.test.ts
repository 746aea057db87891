/**
 * The WAL follower and guard against a real SQLite file: commits found and dated, torn or stale
 * frames refused, restore by SQLite's own recovery, and the checkpoint's coordination between the
 * writer's thread (WalGuard) and the follower (which runs on the backup's worker thread).
 */
import Database from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WalFollower } from './wal.js';
import { WalGuard } from './wal-guard.js';
import { parseWalHeader, scanFrames, WAL_HEADER_BYTES } from './wal-format.js';
import { applyWal, finishDatabase } from './wal-restore.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function fresh() {
  const dir = mkdtempSync(join(tmpdir(), 'tb-wal-'));
  dirs.push(dir);
  const file = join(dir, 'db.sqlite');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('wal_autocheckpoint = 0');
  db.exec('CREATE TABLE t (x TEXT)');
  return { dir, file, db };
}

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
});
