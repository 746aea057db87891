/**
 * The backfill that takes a checkpoint's bulk off the event loop (wal-backfill.ts), against a real
 * SQLite file: it copies frames only through the guard's read, the WAL keeps every frame for the
 * follower (no start-over under it), and the checkpoint after it restores exactly the source.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WalFollower } from './wal.js';
import { WalBackfill } from './wal-backfill.js';
import { WalGuard } from './wal-guard.js';
import { parseWalIndex } from './wal-format.js';
import { restoredRows, walDatabases } from './wal-fixtures.js';

const database = walDatabases();
function fresh() {
  const d = database();
  d.db.pragma('wal_checkpoint(TRUNCATE)');
  return { ...d, insert: d.db.prepare('INSERT INTO t VALUES (?)') };
}

const index = (file: string) => parseWalIndex(readFileSync(`${file}-shm`))!;

describe('WalBackfill', () => {
  it("copies frames only through the guard's read; the WAL keeps them all, and the checkpoint after it restores the source", async () => {
    const { dir, file, db, insert } = fresh();
    const base = join(dir, 'base.sqlite');
    await db.backup(base);
    const g = new WalGuard(file);
    const f = new WalFollower(file);
    const b = new WalBackfill(file);
    for (let i = 0; i < 20; i++) insert.run(`before-${i}-${'b'.repeat(3000)}`);
    g.advance();
    const atAdvance = index(file).frames;
    for (let i = 0; i < 10; i++) insert.run(`after-${i}-${'a'.repeat(3000)}`);
    const r = b.run();
    const fsize = 24 + f.pageSize;
    expect(r.frames).toBe(index(file).frames);
    expect(r.backfilled, "no further than the guard's read").toBe(atAdvance);
    expect(r.remainingBytes).toBe((r.frames - atAdvance) * fsize);
    // Everything the backfill may copy is copied; the next write must not start the WAL over.
    g.advance();
    expect(b.run().remainingBytes).toBe(0);
    insert.run('next');
    f.scan();
    expect(f.lost).toBe(false);
    expect(f.frames, 'every frame since the start is still in the WAL for the follower').toBe(index(file).frames);
    const c = g.checkpoint(f.end)!;
    expect(c.restarted).toBe(true);
    f.appendTail(c.tail, c.marks);
    const frames = Buffer.from(f.readFrames(1, f.frames));
    const header = Buffer.from(f.headerBytes!);
    const source = db.prepare('SELECT x FROM t ORDER BY rowid').all();
    db.close();
    f.close();
    g.close();
    b.close();
    expect(restoredRows(dir, base, [{ header, frames }])).toEqual(source);
  });

  it('copies nothing while the guard reads a WAL that was fully copied when its read began (why the guard advances first)', () => {
    const { file, db, insert } = fresh();
    const g = new WalGuard(file);
    const f = new WalFollower(file);
    insert.run('a');
    f.scan();
    const c = g.checkpoint(f.end)!;
    expect(c.restarted).toBe(true);
    f.appendTail(c.tail, c.marks);
    for (let i = 0; i < 5; i++) insert.run(`b-${i}`);
    const b = new WalBackfill(file);
    expect(b.run().backfilled).toBe(0);
    g.advance();
    expect(b.run().remainingBytes).toBe(0);
    b.close();
    db.close();
    f.close();
    g.close();
  });
});
