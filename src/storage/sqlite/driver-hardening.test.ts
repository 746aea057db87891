/** The SQLite driver's hardening: byte-bounded statement caches and text matching off the event loop (docs/reference/data.md). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../core/errors.js';
import { openSqlite, type SqliteDriver } from './driver.js';
import { MAX_CACHED_SQL, STATEMENT_CACHE_BYTES } from './statement-budget.js';

let dir: string;
let db: SqliteDriver;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tb-driver-'));
  db = openSqlite(join(dir, 'db.sqlite'));
  await db.execScript('CREATE TABLE t (id INTEGER PRIMARY KEY, s TEXT)');
  await db.transaction(async (tx) => {
    for (let i = 0; i < 8; i++) await tx.run('INSERT INTO t (s) VALUES (?)', ['a'.repeat(400_000)]);
    await tx.run('INSERT INTO t (s) VALUES (?)', ['needle in a haystack']);
  });
});
afterAll(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('statement cache', () => {
  it('stays under its byte budget and skips huge statements', async () => {
    const list = Array.from({ length: 3500 }, () => '?').join(', ');
    const params = Array.from({ length: 3500 }, (_, i) => i);
    for (let q = 0; q < 450; q++) await db.all(`SELECT COUNT(*) AS n FROM t WHERE id IN (${list}) AND ${q} = ${q}`, params);
    const before = db.statementStats().reader;
    expect(before.bytes).toBeLessThanOrEqual(STATEMENT_CACHE_BYTES);
    expect(before.count).toBeLessThan(450); // the byte budget, not the count, evicted
    const huge = `SELECT COUNT(*) AS n FROM t WHERE s <> '${'x'.repeat(MAX_CACHED_SQL)}'`;
    expect((await db.get(huge))?.n).toBe(9);
    expect(db.statementStats().reader.bytes).toBe(before.bytes);
  });
});

describe('text matching reads', () => {
  it('answer the same rows through the worker pool', async () => {
    const rows = await db.all('SELECT id FROM t WHERE instr(s, ?) > 0', ['needle']);
    expect(rows).toEqual([{ id: 9 }]);
    expect((await db.get('SELECT COUNT(*) AS n FROM t WHERE substr(s, 1, ?) = ?', [3, 'aaa']))?.n).toBe(8);
  });

  it('do not hold the event loop while they run', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const pattern = `${'a'.repeat(255)}b`;
    await Promise.all([1, 2, 3].map(() => db.get('SELECT COUNT(*) AS n FROM t WHERE instr(s, ?) > 0', [pattern])));
    clearInterval(timer);
    expect(ticks).toBeGreaterThan(0); // on the main thread the event loop would not have turned once
  });

  it('map database errors like the main connection', async () => {
    await expect(db.all('SELECT nope FROM t WHERE instr(s, ?) > 0', ['x'])).rejects.toThrow(/no such column/);
  });
});

describe('read pool time budget', () => {
  it('stops a read past the budget with 503 and serves the next one', async () => {
    const d = openSqlite(join(dir, 'db.sqlite'), { readPool: { size: 1, timeoutMs: 1 } });
    try {
      const slow = d.get('SELECT COUNT(*) AS n FROM t a, t b, t c WHERE instr(a.s || b.s || c.s, ?) > 0', [`${'a'.repeat(255)}b`]);
      await expect(slow).rejects.toBeInstanceOf(ApiError);
      await expect(slow).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    } finally {
      await d.close();
    }
    const fresh = openSqlite(join(dir, 'db.sqlite'), { readPool: { size: 1, timeoutMs: 10_000 } });
    try {
      expect(await fresh.all('SELECT id FROM t WHERE instr(s, ?) > 0', ['needle'])).toEqual([{ id: 9 }]);
    } finally {
      await fresh.close();
    }
  });
});
