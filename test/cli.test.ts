/**
 * End-to-end: the real `tablebase` binary refuses what it does not understand (issue #15 item 6):
 * one line on stderr, no stack, a non-zero exit, and no server started.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, secret } from './helpers/server.js';

const run = (args: string[], env: Record<string, string> = {}) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((res) =>
    execFile(
      process.execPath,
      [join(ROOT, 'bin/tablebase.mjs'), ...args],
      { cwd: ROOT, timeout: 60_000, env: { ...process.env, JWT_SECRET: secret(), PASSWORD_SECRET: secret(), ...env } },
      (err, stdout, stderr) => res({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );

const project = join(ROOT, 'examples/conformance');

describe('strict CLI (real process)', () => {
  it('a misspelt --database stops serve with exit 2 and one line, instead of serving SQLite', async () => {
    const r = await run(['serve', '--project', project, '--datbase', 'postgres://postgres@127.0.0.1/app', '--port', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('tablebase: unknown flag --datbase for `serve` (see `tablebase serve --help`)\n');
    expect(r.stdout).toBe('');
  });

  it('a malformed DATABASE_URL is one line naming the variable, not the password', async () => {
    const r = await run(['serve', '--project', project, '--port', '0'], { DATABASE_URL: 'mysql://root:hunter2@db/app' });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual(['tablebase: DATABASE_URL must be a postgres:// or postgresql:// URL (leave it unset for SQLite), not mysql://…']);
  });

  it('--help lists the flags and exits 0', async () => {
    const r = await run(['dev', '--help']);
    expect(r.code).toBe(0);
    for (const f of ['--project DIR', '--data DIR', '--host HOST', '--port PORT', '--database URL', '--redis URL', '--help']) expect(r.stdout).toContain(f);
  });
});
