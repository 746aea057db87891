/**
 * Nothing left behind by a crash (docs/reference/photos.md, docs/reference/object-storage.md).
 *
 * An upload stores its bytes before its `_photos` row commits, so a process killed in between
 * leaves bytes no row points at. Two mechanisms find them:
 * - a pending mark: an empty file `tmp/pending_<pid>_<id>.pending` written before the bytes are
 *   stored and removed once the row is in (or the bytes are gone). At start, and on every sweep,
 *   the marks of processes that no longer run are settled: no row → the bytes are removed. This
 *   is exact and immediate for the process that crashed on this node.
 * - a bounded background sweep over the store itself, for what no mark describes (a node that
 *   never came back, a mark lost with its disk): ids without a row whose newest object is older
 *   than the grace period are removed, a page at a time.
 */
import { open, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PHOTO_ID, leftOver, type BlobStore } from './blob-store.js';

const MARK = /^pending_(\d+)_(ph_[0-9a-z]{16,32})\.pending$/;

export interface RecoveryOptions {
  store: BlobStore;
  /** Whether a `_photos` row exists for the id. */
  hasRow(id: string): Promise<boolean>;
  report(err: unknown, context: string): void;
  /** Unmarked bytes younger than this are never removed (uploads in flight on other nodes); default 1 h. */
  graceMs?: number;
  /** Ids looked at per sweep; default 500. */
  pageSize?: number;
  /** Between sweeps; default 10 min. */
  intervalMs?: number;
}

/** Writes the mark for `id`; returns its path for `clearPending`. */
export async function markPending(store: BlobStore, id: string): Promise<string> {
  const path = join(store.tempDir, `pending_${process.pid}_${id}.pending`);
  await (await open(path, 'w', 0o600)).close();
  return path;
}

export async function clearPending(path: string): Promise<void> {
  await rm(path, { force: true });
}

export class PhotoRecovery {
  readonly #o: Required<RecoveryOptions>;
  #cursor: string | undefined;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> | undefined;

  constructor(options: RecoveryOptions) {
    this.#o = { graceMs: 60 * 60 * 1000, pageSize: 500, intervalMs: 10 * 60 * 1000, ...options };
  }

  /** Settles the marks of dead processes; returns how many photos' bytes were removed. */
  async settleMarks(): Promise<number> {
    let removed = 0;
    for (const name of await readdir(this.#o.store.tempDir)) {
      const m = MARK.exec(name);
      if (!m) continue;
      const path = join(this.#o.store.tempDir, name);
      const mtime = await stat(path).then(
        (s) => s.mtimeMs,
        () => null,
      );
      if (mtime === null || !leftOver(name, mtime)) continue;
      const id = m[2]!;
      if (!(await this.#o.hasRow(id))) {
        await this.#o.store.delete(id);
        removed++;
      }
      await rm(path, { force: true });
    }
    return removed;
  }

  /** One page of the store: ids without a row, older than the grace period, are removed. */
  async sweepPage(now = Date.now()): Promise<number> {
    const { ids, next } = await this.#o.store.scan(this.#cursor, this.#o.pageSize);
    let removed = 0;
    for (const [id, mtimeMs] of ids) {
      if (!PHOTO_ID.test(id) || mtimeMs > now - this.#o.graceMs) continue;
      if (await this.#o.hasRow(id)) continue;
      await this.#o.store.delete(id);
      removed++;
    }
    this.#cursor = next; // undefined: start over next time
    return removed;
  }

  /** At start: the marks, then one page; afterwards every `intervalMs`. Failures are reported, never thrown. */
  start(): Promise<void> {
    const pass = async () => {
      try {
        await this.settleMarks();
        await this.sweepPage();
      } catch (err) {
        this.#o.report(err, 'removing photo bytes without a row');
      }
    };
    const first = pass();
    this.#running = first;
    this.#timer = setInterval(() => {
      if (!this.#running) this.#running = pass().finally(() => (this.#running = undefined));
    }, this.#o.intervalMs).unref();
    return first.finally(() => {
      if (this.#running === first) this.#running = undefined;
    });
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#running;
  }
}
