/** What the backup tests share: running the CLI, a destination folder, photos. */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, expect } from 'vitest';
import { image, sendBinary } from '../helpers/photos.js';
import { bearer, ROOT, type TestServer } from '../helpers/server.js';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `tablebase <args>` to the end (killed after `timeoutMs`). */
export function runCli(args: string[], env: Record<string, string> = {}, timeoutMs = 120_000): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [join(ROOT, 'bin/tablebase.mjs'), ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.once('error', reject);
    p.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A fresh destination folder and its file:// URL. */
export function destination(): { dir: string; url: string } {
  const dir = mkdtempSync(join(tmpdir(), 'tb-backup-'));
  return { dir, url: pathToFileURL(dir).href };
}

/**
 * What most backup tests set up: a destination folder, and the servers and folders a test adds to
 * `servers` / `folders`, all stopped and removed after the file's tests (even when one fails).
 */
export function backupScene(): { dest: { dir: string; url: string }; servers: TestServer[]; folders: string[] } {
  const dest = destination();
  const scene = { dest, servers: [] as TestServer[], folders: [dest.dir] };
  afterAll(async () => {
    for (const s of scene.servers) await s.dispose();
    for (const f of scene.folders) rmSync(f, { recursive: true, force: true });
  });
  return scene;
}

/** A data folder path that does not exist yet. */
export function newDataDir(): string {
  return join(mkdtempSync(join(tmpdir(), 'tb-restored-')), 'data');
}

export const PROJECT = join(ROOT, 'examples/conformance');

interface LogFile {
  at: number;
  events: ({ id: string; sha256: string } | { id: string; deleted: true })[];
}

/** Which photo ids the destination's photo log holds now (present or deleted). */
export function loggedPhotos(destDir: string): Map<string, 'present' | 'deleted'> {
  const state = new Map<string, 'present' | 'deleted'>();
  let names: string[] = [];
  try {
    names = readdirSync(join(destDir, 'photos/log')).filter((n) => n.endsWith('.json'));
  } catch {
    return state;
  }
  for (const n of names.sort()) {
    const log = JSON.parse(readFileSync(join(destDir, 'photos/log', n), 'utf8')) as LogFile;
    for (const e of log.events) state.set(e.id, 'deleted' in e ? 'deleted' : 'present');
  }
  return state;
}

/** The two photos the photo-restore tests upload: one kept, one deleted between two moments. */
export async function twoPhotos(): Promise<{ kept: Buffer; dropped: Buffer }> {
  return { kept: await image(40, 30).png().toBuffer(), dropped: await image(30, 20).jpeg().toBuffer() };
}

/** Uploads a photo as a signed-in user; answers its id (any other answer fails the test). */
export async function uploadPhoto(base: string, accessToken: string, body: Buffer, type: string): Promise<string> {
  const r = await sendBinary<{ data: { id: string } }>(base, 'POST', '/img', { body, type, headers: bearer(accessToken) });
  expect(r.status, r.text).toBe(200);
  return r.json.data.id;
}

/** Restores `from` (at `at`, ms, when given) into a new data folder that `folders` cleans up; the restore must exit 0. */
export async function restoreInto(folders: string[], from: string, o: { at?: number; env?: Record<string, string> } = {}): Promise<string> {
  const target = newDataDir();
  folders.push(target);
  const r = await runCli(['restore', '--from', from, '--data', target, ...(o.at !== undefined ? ['--at', new Date(o.at).toISOString()] : [])], o.env);
  expect(r.code, r.stderr + r.stdout).toBe(0);
  return target;
}
