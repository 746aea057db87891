/** Bad `--workers` / `WORKERS` values stop `serve` with one line and exit code 2. */
import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/server.js';

function serve(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/tablebase.mjs', 'serve', '--project', 'examples/conformance', ...args], { cwd: ROOT, env: { ...process.env, ...env }, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, out: stdout + stderr }),
    );
  });
}

describe('--workers values', { timeout: 60_000 }, () => {
  it.each([['0'], ['-1'], ['two'], ['1.5'], ['65']])('refuses --workers %s with one line', async (v) => {
    const r = await serve([`--workers=${v}`]);
    expect(r.code).toBe(2);
    expect(r.out.trim().split('\n')).toHaveLength(1);
    expect(r.out).toContain('--workers must be auto or a whole number from 1 to 64');
  });

  it('refuses a bad WORKERS with one line naming it', async () => {
    const r = await serve([], { WORKERS: 'lots' });
    expect(r.code).toBe(2);
    expect(r.out.trim().split('\n')).toHaveLength(1);
    expect(r.out).toContain('WORKERS must be auto');
  });
});
