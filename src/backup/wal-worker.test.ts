/**
 * A snapshot's upload on the backup's worker thread (wal-thread.ts, docs/reference/backups.md):
 * it runs beside the shipping requests, not queued with them, and a worker that dies while it runs
 * fails it instead of leaving it pending. The "database file" is a named pipe, so the upload waits
 * for the test's bytes: the order is the test's, with no timing.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, constants, mkdtempSync, openSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { FileDestination } from './file-destination.js';
import { keys, openManifest, sha256, type SnapshotManifest } from './layout.js';
import { WalWorker } from './wal-worker.js';

const dirs: string[] = [];
const pipes: string[] = [];
const workers: WalWorker[] = [];
afterEach(async () => {
  // A worker still waiting on its pipe (a failed test) cannot stop: an end of file releases it.
  for (const p of pipes.splice(0)) {
    try {
      closeSync(openSync(p, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      /* no reader left */
    }
  }
  for (const w of workers.splice(0)) await w.terminate();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const noMarks = () => ({ sizes: new Float64Array(0), times: new Float64Array(0) });

/** A worker over a named pipe standing for the database file, and a folder destination. */
async function scene() {
  const dir = mkdtempSync(join(tmpdir(), 'tb-snap-worker-'));
  dirs.push(dir);
  const file = join(dir, 'db.sqlite');
  execFileSync('mkfifo', [file]);
  pipes.push(file);
  const destDir = join(dir, 'dest');
  const w = new WalWorker(file, pathToFileURL(destDir).href);
  workers.push(w);
  await w.request('generation', { gen: 'g1', marks: noMarks() });
  const position = await w.request('position', { marks: noMarks() });
  return { file, dest: new FileDestination(destDir), w, position };
}

/** Tracks whether a promise has settled (without waiting for it). */
function watch<T>(p: Promise<T>): { settled: () => boolean } {
  let settled = false;
  p.then(
    () => (settled = true),
    () => (settled = true),
  );
  return { settled: () => settled };
}

describe('a snapshot on the backup worker', () => {
  it('ships beside a running upload, then answers the manifest, written after its object', async () => {
    const { file, dest, w, position } = await scene();
    const snap = w.request('snapshot', { generation: 'g1', takenAtMs: 1_700_000_000_000, position });
    const s = watch(snap);
    // The upload waits for the file's bytes; syncs are answered meanwhile.
    const state = await w.request('ship', { marks: noMarks(), at: Date.now() });
    expect(state.lost).toBe(false);
    await w.request('position', { marks: noMarks() });
    expect(s.settled()).toBe(false);
    const bytes = randomBytes(3 * 1024 * 1024 + 5);
    const pipe = await open(file, 'w');
    await pipe.write(bytes);
    await pipe.close();
    const m = await snap;
    expect(m).toMatchObject({ kind: 'snapshot', generation: 'g1', database: 'sqlite', bytes: bytes.length, sha256: sha256(bytes), position });
    expect(openManifest<SnapshotManifest>(keys.snapshotManifest('g1', m.id), await dest.get(keys.snapshotManifest('g1', m.id)), 'snapshot')).toEqual(m);
    expect((await dest.get(m.object))?.equals(bytes)).toBe(true);
  });

  it('fails, and leaves no manifest, when the worker dies mid-upload', async () => {
    const { file, dest, w, position } = await scene();
    const snap = w.request('snapshot', { generation: 'g1', takenAtMs: 1_700_000_000_000, position });
    const failed = expect(snap).rejects.toThrow(/backup worker/);
    const pipe = await open(file, 'w'); // opens once the upload has opened the file
    await pipe.write(randomBytes(1024 * 1024));
    const stopping = w.terminate();
    // The worker's pending read of the pipe returns (end of file) and its thread can exit.
    await pipe.close();
    await failed;
    await stopping;
    expect(await dest.list(keys.generation('g1'))).toEqual([]);
    await expect(w.request('ship', { marks: noMarks(), at: Date.now() })).rejects.toThrow(/backup worker/);
  });
});
