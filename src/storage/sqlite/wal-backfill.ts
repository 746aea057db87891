/**
 * Backfill off the event loop, for continuous backup (docs/reference/backups.md, "The checkpoint"):
 * a PASSIVE checkpoint on a connection of its own, run on the backup's worker thread. It copies
 * into the database file every WAL frame no reader still needs (our WalGuard's read transaction
 * bounds it at the guard's mark) and syncs the WAL and the file: the bulk of a checkpoint's work,
 * which a checkpoint on the thread that serves requests and runs the writer did synchronously
 * (3–42 ms per 4 MB of WAL, measured). PASSIVE never waits for a lock and never starts the WAL
 * over, so it cannot lose a frame the backup has not read; the RESTART that lets the writer reuse
 * the WAL stays on the main thread (WalGuard.checkpoint) and then has little or nothing to copy.
 */
import Database from 'better-sqlite3';
import { FRAME_HEADER_BYTES } from './wal-format.js';

export interface BackfillResult {
  /** Frames in the WAL since it last started over. */
  readonly frames: number;
  /** Of those, frames now in the database file. */
  readonly backfilled: number;
  /** Bytes of WAL frames not yet in the database file. */
  readonly remainingBytes: number;
}

export class WalBackfill {
  readonly #file: string;
  #db: Database.Database | null = null;
  #frameBytes = 0;

  constructor(dbFile: string) {
    this.#file = dbFile;
  }

  run(): BackfillResult {
    if (!this.#db) {
      const db = new Database(this.#file);
      db.pragma('busy_timeout = 0');
      // This connection never writes; if it ever did, no checkpoint of its own on commit.
      db.pragma('wal_autocheckpoint = 0');
      this.#frameBytes = FRAME_HEADER_BYTES + (db.pragma('page_size', { simple: true }) as number);
      this.#db = db;
    }
    const r = (this.#db.pragma('wal_checkpoint(PASSIVE)') as { busy: number; log: number; checkpointed: number }[])[0];
    // log = -1: not in WAL mode (never for a serving database); report nothing done.
    const frames = Math.max(0, r?.log ?? 0);
    const backfilled = Math.max(0, r?.checkpointed ?? 0);
    return { frames, backfilled, remainingBytes: (frames - backfilled) * this.#frameBytes };
  }

  close(): void {
    this.#db?.close();
    this.#db = null;
  }
}
