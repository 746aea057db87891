/**
 * End-to-end: the real `tablebase` binary refuses what it does not understand (issue #15 item 6):
 * one line on stderr, no stack, a non-zero exit, and no server started.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, secret, startServer } from './helpers/server.js';

const run = (args: string[], env: Record<string, string> = {}) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((res) =>
    execFile(
      process.execPath,
      [join(ROOT, 'bin/tablebase.mjs'), ...args],
      { cwd: ROOT, timeout: 120_000, env: { ...process.env, JWT_SECRET: secret(), PASSWORD_SECRET: secret(), ...env } },
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

describe('request logs (real process)', () => {
  const poll = async (read: () => string, re: RegExp) => {
    for (let i = 0; i < 50 && !re.test(read()); i++) await new Promise((r) => setTimeout(r, 50));
    return read();
  };

  it('serve writes one JSON line per request; LOG_FORMAT=pretty turns it into a short line', async () => {
    const json = await startServer();
    const pretty = await startServer({ env: { LOG_FORMAT: 'pretty', NO_COLOR: '1' } });
    try {
      await json.call('GET', '/health', undefined, { 'x-request-id': 'log-test-1' });
      await pretty.call('GET', '/nope', undefined, { 'x-request-id': 'log-test-2' });
      const line = (await poll(json.log, /log-test-1/)).split('\n').find((l) => l.includes('log-test-1'))!;
      expect(JSON.parse(line)).toMatchObject({ level: 30, msg: 'request', method: 'GET', path: '/health', status: 200, requestId: 'log-test-1' });
      expect(await poll(pretty.log, /log-test-2/)).toMatch(/INFO: GET \/nope 404 [\d.]+ms log-test-2\n/);
    } finally {
      await Promise.all([json.dispose(), pretty.dispose()]);
    }
  });
});
