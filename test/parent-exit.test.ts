/**
 * `serve` started through npm stops with npm (issue #27 item 1). npm runs a script as
 * `sh -c '<command>'`; killing npm (the PID of `npm start`, or `$!` after `npx tablebase serve &`)
 * kills that shell without passing the signal on. Here a shell that does not `exec` stands in for
 * it, with the variable npm sets; SIGKILL on the shell must still stop the server.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, it } from 'vitest';
import { killGroup, marker } from './helpers/processes.js';
import { freePort, ROOT, secret } from './helpers/server.js';

const dir = mkdtempSync(join(tmpdir(), 'tb-parent-'));
// A project outside the repository (dev writes .env into its project), reaching tablebase as an installed one does.
const project = join(dir, 'project');
mkdirSync(join(project, 'node_modules'), { recursive: true });
symlinkSync(ROOT, join(project, 'node_modules/tablebase'), 'dir');
copyFileSync(join(ROOT, 'examples/todo/tablebase.config.ts'), join(project, 'tablebase.config.ts'));
cpSync(join(ROOT, 'examples/todo/migrations'), join(project, 'migrations'), { recursive: true });
writeFileSync(join(project, 'package.json'), '{"type":"module"}\n');
let pgid: number | undefined;
afterAll(() => {
  if (pgid) killGroup(pgid);
  rmSync(dir, { recursive: true, force: true });
});

const health = (base: string) =>
  fetch(`${base}/health`).then(
    (r) => r.status === 200,
    () => false,
  );

async function until(check: () => Promise<boolean>, what: string, output: () => string): Promise<void> {
  for (const deadline = Date.now() + 120_000; Date.now() < deadline;) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}:\n${output()}`);
}

for (const command of ['serve', 'dev'] as const) {
  it(`${command} started by npm stops when npm's shell is killed`, { timeout: 180_000 }, async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const bin = join(ROOT, 'bin/tablebase.mjs');
    const args = [bin, command, '--project', project, '--data', join(dir, command), '--host', '127.0.0.1', '--port', String(port)];
    // `; true` keeps the shell as the server's parent, as npm's `sh -c` is.
    const sh = spawn('sh', ['-c', `"${process.execPath}" ${args.map((a) => `'${a}'`).join(' ')}; true`], {
      env: { ...process.env, ...marker(), npm_lifecycle_event: 'start', JWT_SECRET: secret(), PASSWORD_SECRET: secret(), LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    pgid = sh.pid;
    let output = '';
    sh.stdout!.on('data', (d) => (output += d));
    sh.stderr!.on('data', (d) => (output += d));
    await until(
      () => health(base),
      `${command} to serve`,
      () => output,
    );
    process.kill(sh.pid!, 'SIGKILL'); // npm dies; nothing forwards a signal
    await until(
      async () => !(await health(base)),
      `${command} to stop after its parent`,
      () => output,
    );
  });
}
