/**
 * Shared fixtures for the WAL tests (wal.test.ts, wal-backfill.test.ts): a fresh database in WAL
 * mode with the writer's own checkpoints off, and what a restore of shipped frames gives. Tests
 * only (left out of the build, tsconfig.build.json).
 */
import Database from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { applyWal, finishDatabase } from './wal-restore.js';

/** Fresh databases of the calling test file, removed after each test. */
export function walDatabases(): () => { dir: string; file: string; db: Database.Database } {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(join(tmpdir(), 'tb-wal-'));
    dirs.push(dir);
    const file = join(dir, 'db.sqlite');
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('wal_autocheckpoint = 0');
    db.exec('CREATE TABLE t (x TEXT)');
    return { dir, file, db };
  };
}

/** The rows of `t` a restore gives: `epochs` (header and frames, in order) replayed over a copy of `base`. */
export function restoredRows(dir: string, base: string, epochs: { header: Buffer; frames: Buffer }[]): unknown[] {
  const restored = join(dir, 'restored.sqlite');
  writeFileSync(restored, readFileSync(base));
  for (const e of epochs) applyWal(restored, e.header, e.frames);
  finishDatabase(restored);
  const r = new Database(restored, { readonly: true });
  try {
    return r.prepare('SELECT x FROM t ORDER BY rowid').all();
  } finally {
    r.close();
  }
}
