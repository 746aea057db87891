/**
 * Writes racing the backup's checkpoints (docs/reference/backups.md, "The checkpoint, with the
 * follower on another thread"): concurrent creates of large and small rows write well over the
 * 4 MB checkpoint threshold several times while the worker thread reads and ships; after kill -9
 * and the loss of the data folder, the restore holds exactly every row answered before.
 */
import Database from 'better-sqlite3';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pause } from '../helpers/poll.js';
import { createRows } from '../helpers/rows.js';
import { startServer } from '../helpers/server.js';
import { backupScene, restoreInto } from './helpers.js';

describe('writes racing checkpoints', () => {
  const { dest, servers, folders } = backupScene();

  it('lose no row: the restore equals what was answered', async () => {
    const s = await startServer({ args: ['--backup', dest.url] });
    servers.push(s);
    const answered: string[] = [];
    const big = 'b'.repeat(50_000);
    // Over a page, so every row has overflow pages of its own, written once: a frame lost is not
    // repaired by a later image of the same page, and the comparison below sees it.
    const overflow = 's'.repeat(5_000);
    const until = Date.now() + 8_000;
    // Large rows fill the WAL past the threshold every second or so; small ones keep committing
    // between the worker's read and the main thread's checkpoint (the tail).
    const large = async (lane: number) => {
      for (let i = 0; i < 60 && Date.now() < until; i++) {
        const rows = await createRows(s, 'big', [{ payload: `L${lane}-${i}-a-${big}` }, { payload: `L${lane}-${i}-b-${big}` }]);
        answered.push(...rows.map((r) => String(r.payload)));
      }
    };
    const small = async (lane: number) => {
      for (let i = 0; i < 120 && Date.now() < until; i++) {
        const rows = await createRows(s, 'big', [{ payload: `S${lane}-${i}-${overflow}` }]);
        answered.push(...rows.map((r) => String(r.payload)));
      }
    };
    await Promise.all([large(0), large(1), large(2), small(0), small(1), small(2)]);
    await pause(2_500);
    await s.stop('SIGKILL');
    rmSync(s.dataDir, { recursive: true, force: true });

    const gens = readdirSync(join(dest.dir, 'generations'));
    expect(gens).toHaveLength(1);
    const epochs = readdirSync(join(dest.dir, 'generations', gens[0]!, 'wal'));
    expect(epochs.length, 'the backup checkpointed (a new WAL epoch) more than once').toBeGreaterThan(2);

    const target = await restoreInto(folders, dest.url);
    // Read straight from the restored file: the rows are too large for one /db/list answer.
    const db = new Database(join(target, 'db.sqlite'), { readonly: true });
    const rows = db.prepare('SELECT payload FROM big').all() as { payload: string }[];
    db.close();
    expect(rows.map((x) => x.payload).sort()).toEqual([...answered].sort());
  }, 180_000);
});
