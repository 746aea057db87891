/**
 * Test support: writes a generated client and usage files into a fresh ESM folder and runs
 * `tsc --strict` over them, as a user's project would.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const REPO_ROOT = resolve(import.meta.dirname, '../..');

export function clientFolder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'tb-client-'));
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n');
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

/** Resolves with tsc's exit code and output. */
export function typecheck(dir: string, files: string[]): Promise<{ code: number; output: string }> {
  const tsc = join(REPO_ROOT, 'node_modules/.bin/tsc');
  const args = ['--noEmit', '--strict', '--target', 'ES2022', '--module', 'NodeNext', '--moduleResolution', 'NodeNext', '--types', 'node', ...files.map((f) => join(dir, f))];
  return new Promise((res) => {
    execFile(tsc, args, { cwd: REPO_ROOT, timeout: 120_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      res({ code, output: `${stdout}${stderr}` });
    });
  });
}
