/**
 * Why snapshots stream the database file (docs/reference/backups.md, "How it works"): the three
 * ways to copy a live SQLite database, each measured on the same ~BENCH_DB_MB database while a
 * steady create load writes through the writer connection, in one process (as in the server, the
 * event loop is shared: whatever blocks it delays every write). Against the same load without any
 * snapshot, in the same run:
 *   - stream:          checkpoint(TRUNCATE), then a read transaction on a second connection held
 *                      while the file is streamed to a file beside it (what ContinuousBackup does);
 *   - vacuum-into:     `VACUUM INTO` on a second connection (what `backup create` uses offline);
 *   - backup-other:    better-sqlite3 `db.backup()` (the online backup API) from a second connection;
 *   - backup-writer:   the same from the writer connection itself.
 * A write is scheduled every LOAD_MS; its latency is its completion minus its scheduled time, so a
 * blocked event loop shows. Reported: snapshot time, create p50/p99/max during it, and writes done.
 *
 *   flock /tmp/bench.lock node --import tsx bench/snapshot-mechanisms.ts   (BENCH_DB_MB=200, about 2 minutes)
 */
import Database from 'better-sqlite3';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { percentileOf } from './lib.js';

const DB_MB = Number(process.env.BENCH_DB_MB ?? 200);
const LOAD_MS = Number(process.env.BENCH_LOAD_MS ?? 2);
/** A mechanism still running after this is reported as not finishing. */
const GIVE_UP_MS = Number(process.env.BENCH_GIVE_UP_MS ?? 60_000);
const QUIET_MS = 5_000;
/** Writes before each snapshot starts (counted with it: they show the load is running). */
const LEAD_MS = 100;

const work = mkdtempSync(join(tmpdir(), 'tb-bench-snapmech-'));
const file = join(work, 'db.sqlite');
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const percentile = (xs: number[], p: number) => (xs.length ? percentileOf(xs, p) : NaN);

const writer = new Database(file);
writer.pragma('journal_mode = WAL');
writer.pragma('synchronous = NORMAL');
writer.exec('CREATE TABLE IF NOT EXISTS big (id INTEGER PRIMARY KEY, payload TEXT NOT NULL)');
const insert = writer.prepare('INSERT INTO big (payload) VALUES (?)');

function seed(): void {
  const payload = 'x'.repeat(60_000);
  const many = writer.transaction((n: number) => {
    for (let i = 0; i < n; i++) insert.run(`${i}${payload}`);
  });
  while (statSync(file).size < DB_MB * 1024 * 1024) {
    many(200);
    writer.pragma('wal_checkpoint(TRUNCATE)');
  }
}

/** Writes one small row every LOAD_MS until `stop` resolves; returns each write's latency (ms). */
async function createLoad(stop: Promise<unknown>): Promise<number[]> {
  const latencies: number[] = [];
  let done = false;
  void stop.finally(() => (done = true));
  let next = performance.now();
  while (!done) {
    next += LOAD_MS;
    const wait = next - performance.now();
    if (wait > 0) await pause(wait);
    else await new Promise((r) => setImmediate(r));
    insert.run('a row written during the benchmark');
    // A timer may fire a fraction of a millisecond early: early is on time.
    latencies.push(Math.max(0, performance.now() - next));
  }
  return latencies;
}

type Mechanism = (target: string) => Promise<void>;

class GaveUp extends Error {}
/** Restarts seen by the last online backup (its remaining pages went up: another connection wrote). */
let restarts = 0;
/** The online backup's progress callback: counts restarts, and aborts it after GIVE_UP_MS. */
function watchBackup(): (p: { totalPages: number; remainingPages: number }) => number {
  const t0 = performance.now();
  let remaining = Infinity;
  restarts = 0;
  return (p) => {
    if (p.remainingPages > remaining) restarts++;
    remaining = p.remainingPages;
    if (performance.now() - t0 > GIVE_UP_MS) throw new GaveUp();
    return 100; // pages per step: better-sqlite3's default
  };
}

const mechanisms: Record<string, Mechanism> = {
  async stream(target) {
    writer.pragma('wal_checkpoint(TRUNCATE)');
    const reader = new Database(file, { readonly: true });
    try {
      reader.prepare('BEGIN').run();
      reader.prepare('SELECT count(*) FROM sqlite_master').get(); // the read transaction starts here
      await pipeline(createReadStream(file), createWriteStream(target));
      reader.prepare('COMMIT').run();
    } finally {
      reader.close();
    }
  },
  async 'vacuum-into'(target) {
    const reader = new Database(file, { readonly: true });
    try {
      reader.prepare('VACUUM INTO ?').run(target);
    } finally {
      reader.close();
    }
  },
  async 'backup-other'(target) {
    const reader = new Database(file, { readonly: true });
    try {
      await reader.backup(target, { progress: watchBackup() });
    } finally {
      reader.close();
    }
  },
  async 'backup-writer'(target) {
    await writer.backup(target, { progress: watchBackup() });
  },
};

async function measure(name: string, m: Mechanism): Promise<string> {
  const target = join(work, `${name}.copy`);
  restarts = 0;
  let outcome = 'finished';
  let t0 = 0;
  // Started from the load's event loop (VACUUM INTO is synchronous: started first, it would run
  // before any write is even scheduled).
  const run = pause(LEAD_MS).then(() => {
    t0 = performance.now();
    return m(target);
  });
  const ended = run.catch((err: unknown) => {
    if (!(err instanceof GaveUp)) throw err;
    outcome = `gave up after ${GIVE_UP_MS / 1000} s`;
  });
  const lat = await createLoad(ended);
  await ended;
  const seconds = (performance.now() - t0) / 1000;
  let copyMb = 0;
  try {
    copyMb = statSync(target).size / 1024 / 1024;
  } catch {
    /* none written */
  }
  rmSync(target, { force: true });
  writer.pragma('wal_checkpoint(TRUNCATE)');
  const time = outcome === 'finished' ? seconds.toFixed(1) : outcome;
  return `| ${name} | ${time} | ${restarts} | ${copyMb.toFixed(0)} | ${percentile(lat, 50).toFixed(1)} | ${percentile(lat, 99).toFixed(1)} | ${Math.max(...lat).toFixed(0)} | ${lat.length} |`;
}

async function main() {
  const s0 = Date.now();
  seed();
  const sizeMb = statSync(file).size / 1024 / 1024;
  console.log(`seeded ${sizeMb.toFixed(0)} MB in ${((Date.now() - s0) / 1000).toFixed(0)} s; a create every ${LOAD_MS} ms`);
  console.log('\n| snapshot | time s | restarts | copy MB | create p50 ms | create p99 ms | create max ms | creates |\n|---|---|---|---|---|---|---|---|');
  const quiet = await createLoad(pause(QUIET_MS));
  console.log(`| none (baseline, ${QUIET_MS / 1000} s) | | | | ${percentile(quiet, 50).toFixed(1)} | ${percentile(quiet, 99).toFixed(1)} | ${Math.max(...quiet).toFixed(0)} | ${quiet.length} |`);
  for (const [name, m] of Object.entries(mechanisms)) console.log(await measure(name, m));
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => {
    writer.close();
    rmSync(work, { recursive: true, force: true });
  });
