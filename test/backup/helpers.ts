/** What the backup tests share: running the CLI, a destination folder, photos. */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../helpers/server.js';

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

/** A data folder path that does not exist yet. */
export function newDataDir(): string {
  return join(mkdtempSync(join(tmpdir(), 'tb-restored-')), 'data');
}

export const PROJECT = join(ROOT, 'examples/conformance');
