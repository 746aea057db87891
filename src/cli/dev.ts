/**
 * `tablebase dev`: creates `.env` with random secrets when none exist, then runs the server in a
 * child process (migrations generated and applied automatically) and restarts it when a project
 * file changes. A child process gives every restart fresh modules.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { watch } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureDevSecrets } from '../auth/secrets.js';
import { projectDirOf, type Args } from './args.js';

const BIN = fileURLToPath(new URL('../../bin/tablebase.mjs', import.meta.url));

export async function dev(args: Args, argv: readonly string[]): Promise<void> {
  const projectDir = resolve(projectDirOf(args));
  const made = ensureDevSecrets(projectDir);
  if (made.wrote.length) console.log(`Wrote random ${made.wrote.join(' and ')} to ${made.path} (development only).`);
  const childArgv = [BIN, '__run-dev', ...argv.slice(1)];
  let child: ChildProcess | undefined;
  let restarting: NodeJS.Timeout | undefined;
  const start = () => {
    child = spawn(process.execPath, childArgv, { stdio: 'inherit' });
  };
  start();
  watch(projectDir, { recursive: true }, (_event, file) => {
    if (!file || /(^|[/\\])(\.tablebase|node_modules|migrations)([/\\]|$)|\.env$/.test(String(file))) return;
    clearTimeout(restarting);
    restarting = setTimeout(() => {
      console.log(`${file} changed: restarting`);
      const old = child;
      old?.once('exit', start);
      old?.kill('SIGTERM');
    }, 150);
  });
  const stop = () => {
    child?.kill('SIGTERM');
    child?.once('exit', () => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
