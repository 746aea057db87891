import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../core/errors.js';
import type { Change } from './changes.js';
import { openSqlite, type SqliteDriver } from './sqlite/driver.js';
import { WriteQueue } from './writer.js';

let dir: string;
let db: SqliteDriver;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'writer-'));
  db = openSqlite(join(dir, 'db.sqlite'));
  await db.execScript('CREATE TABLE t (id TEXT PRIMARY KEY, v INTEGER NOT NULL)');
});
afterEach(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

const insert = (id: string, v: unknown) => async (tx: Parameters<Parameters<WriteQueue['submit']>[0]>[0], changes: Change[]) => {
  await tx.run('INSERT INTO t (id, v) VALUES (?, ?)', [id, v]);
  changes.push({ table: 't', op: 'insert', id, before: null, after: { id } });
  return id;
};

describe('WriteQueue', () => {
  it('commits jobs submitted together in one transaction, isolating a failing one', async () => {
    const q = new WriteQueue(db);
    const commits: number[] = [];
    q.onCommit((c) => commits.push(c.length));
    const results = await Promise.allSettled([q.submit(insert('a', 1)), q.submit(insert('b', null)), q.submit(insert('c', 3))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((await db.all('SELECT id FROM t ORDER BY id')).map((r) => r.id)).toEqual(['a', 'c']);
    // One batch, and the failed job's change was not announced.
    expect(commits).toEqual([2]);
  });

  it('a single failing job rolls back entirely', async () => {
    const q = new WriteQueue(db);
    await expect(
      q.submit(async (tx) => {
        await tx.run('INSERT INTO t (id, v) VALUES (?, ?)', ['x', 1]);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await db.all('SELECT * FROM t')).toEqual([]);
  });

  it('answers 503 WRITE_QUEUE_FULL at once past maxPending, and counts rejections', async () => {
    const q = new WriteQueue(db, { maxPending: 2 });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const first = q.submit(async () => gate); // holds the writer
    await new Promise((r) => setTimeout(r, 5));
    const waiting = [q.submit(insert('a', 1)), q.submit(insert('b', 2))];
    const err = await q.submit(insert('c', 3)).catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.code).toBe('WRITE_QUEUE_FULL');
    expect(err.headers['Retry-After']).toBe('1');
    expect(q.rejected).toBe(1);
    release();
    await first;
    await Promise.all(waiting);
    expect((await db.all('SELECT id FROM t ORDER BY id')).map((r) => r.id)).toEqual(['a', 'b']);
  });

  it('commits writes submitted from separate callbacks of one event-loop turn together (requests read in one poll phase)', async () => {
    const q = new WriteQueue(db);
    const commits: number[] = [];
    q.onCommit((c) => commits.push(c.length));
    // Three callbacks of one check phase stand for three requests read in one poll phase: each
    // runs its microtasks to the end before the next, as a SQLite job would run to its COMMIT.
    const ids = await Promise.all(['a', 'b', 'c'].map((id, i) => new Promise((resolve) => setImmediate(() => resolve(q.submit(insert(id, i)))))));
    expect(ids).toEqual(['a', 'b', 'c']);
    expect(commits).toEqual([3]);
  });

  it('starts a full queue that no transaction has started on instead of refusing it', async () => {
    const q = new WriteQueue(db, { maxPending: 2 });
    const commits: number[] = [];
    q.onCommit((c) => commits.push(c.length));
    const all: Promise<unknown>[] = [];
    await new Promise<void>((resolve) =>
      setImmediate(() => {
        all.push(q.submit(insert('a', 1)), q.submit(insert('b', 2)));
        resolve();
      }),
    );
    // The second filled the queue before its turn ended: the batch started then, so the next write
    // waits behind a running transaction, not behind two jobs that have not started (no 503).
    all.push(q.submit(insert('c', 3)));
    expect(await Promise.all(all)).toEqual(['a', 'b', 'c']);
    expect(q.rejected).toBe(0);
    expect(commits).toEqual([2, 1]);
  });

  it('reads on the read connection never see an open write transaction', async () => {
    const q = new WriteQueue(db);
    let seenInside: unknown[] = [];
    await q.submit(async (tx) => {
      await tx.run('INSERT INTO t (id, v) VALUES (?, ?)', ['z', 1]);
      seenInside = await db.all('SELECT * FROM t');
    });
    expect(seenInside).toEqual([]);
    expect(await db.all('SELECT id FROM t')).toEqual([{ id: 'z' }]);
  });
});
