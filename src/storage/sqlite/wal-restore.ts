/**
 * The restore half of WAL shipping (docs/reference/backups.md): put one epoch's frames back as the
 * database's `-wal` file and let SQLite itself recover and checkpoint them (it checks every
 * frame's salts and checksums and stops at the last valid commit), then check the result.
 */
import Database from 'better-sqlite3';
import { rmSync, writeFileSync } from 'node:fs';
import { frameBytes, parseWalHeader } from './wal-format.js';

/** Applies `header` + `frames` (whole frames, ending with a commit) to `dbFile`; returns the frames SQLite accepted. */
export function applyWal(dbFile: string, header: Buffer, frames: Buffer): number {
  const h = parseWalHeader(header);
  if (!h) throw new Error('not a WAL header');
  const expected = frames.length / frameBytes(h);
  rmSync(`${dbFile}-shm`, { force: true });
  writeFileSync(`${dbFile}-wal`, Buffer.concat([header, frames]));
  const db = new Database(dbFile);
  try {
    db.pragma('journal_mode = WAL');
    // PASSIVE first: its `log` is how many frames SQLite's own recovery found valid.
    const p = db.pragma('wal_checkpoint(PASSIVE)') as { busy: number; log: number; checkpointed: number }[];
    const accepted = p[0]?.log ?? 0;
    if (accepted !== expected) throw new Error(`SQLite accepted ${accepted} of ${expected} frames`);
    const r = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
    if (r[0]?.busy !== 0) throw new Error('could not checkpoint the restored WAL');
    return accepted;
  } finally {
    db.close();
  }
}

/** `PRAGMA integrity_check`: 'ok' or the first problems found. */
export function integrityCheck(dbFile: string): string {
  const db = new Database(dbFile, { readonly: true });
  try {
    const rows = db.pragma('integrity_check') as { integrity_check: string }[];
    return rows.map((r) => r.integrity_check).join('; ');
  } finally {
    db.close();
  }
}

/** Rows per table (every table, internal ones included), for `backup verify`. */
export function rowCounts(dbFile: string): Record<string, number> {
  const db = new Database(dbFile, { readonly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[];
    const out: Record<string, number> = {};
    for (const { name } of tables) {
      // Names come from sqlite_master itself; quoted as identifiers.
      out[name] = (db.prepare(`SELECT count(*) AS n FROM "${name.replace(/"/g, '""')}"`).get() as { n: number }).n;
    }
    return out;
  } finally {
    db.close();
  }
}

/** Photo ids in the restored `_photos` table (null when the table does not exist). */
export function photoIds(dbFile: string): string[] | null {
  const db = new Database(dbFile, { readonly: true });
  try {
    const t = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_photos'").get();
    if (!t) return null;
    return (db.prepare('SELECT id FROM _photos').all() as { id: string }[]).map((r) => r.id);
  } finally {
    db.close();
  }
}

/** A consistent copy of a live database from another process (`backup create` from the CLI). */
export function vacuumInto(dbFile: string, target: string): void {
  const db = new Database(dbFile, { readonly: true });
  try {
    db.prepare('VACUUM INTO ?').run(target);
  } finally {
    db.close();
  }
}

/** Leaves `dbFile` as one self-contained file (no -wal/-shm beside it). */
export function finishDatabase(dbFile: string): void {
  const db = new Database(dbFile);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
  rmSync(`${dbFile}-shm`, { force: true });
  rmSync(`${dbFile}-wal`, { force: true });
}
