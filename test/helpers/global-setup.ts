/**
 * Global setup of both test runs (vitest.config.ts, vitest.postgres.config.ts; issue #27 item 9):
 * one temporary folder per run, made the run's TMPDIR so every `mkdtemp(tmpdir())` of every test
 * lands inside it, and a marker every test process carries. Teardown runs after the last test
 * even when tests timed out: it kills every process still carrying the marker (whole process
 * groups) and removes the run's folder.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killMarked, markedProcesses, MARKER } from './processes.js';

export default function setup(): () => Promise<void> {
  const run = randomBytes(6).toString('hex');
  const dir = mkdtempSync(join(tmpdir(), `tb-run-${run}-`));
  // Traversable by other users (not listable): the PostgreSQL-outage test runs a private cluster as
  // the `postgres` user in a folder of its own below this one.
  chmodSync(dir, 0o711);
  process.env[MARKER] = run;
  process.env.TMPDIR = dir;
  return async () => {
    // Until none is left (up to 10 s): a process forked meanwhile (a server's worker) is caught too.
    const left = killMarked(run);
    for (const deadline = Date.now() + 10_000; Date.now() < deadline && markedProcesses(run).length;) {
      await new Promise((r) => setTimeout(r, 100));
      killMarked(run);
    }
    if (left) console.warn(`test teardown: stopped ${left} process group(s) a test left running`);
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  };
}
