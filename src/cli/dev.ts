/**
 * `tablebase dev`: creates `.env` with random secrets when none exist, then runs the server in a
 * child process (migrations generated and applied automatically) and restarts it when a project
 * file changes. A child process gives every restart fresh modules.
 *
 * The supervisor survives whatever the child does (issue #27 item 1): a crash, a syntax error in
 * tablebase.config.ts or a failed migration ends the child, and dev waits for the next saved
 * change to start a fresh one. It never waits for an `exit` that already happened: the child's
 * state is read from the one `exit` listener, so a restart after a fix always starts. Ctrl-C,
 * SIGTERM and SIGHUP stop the child (SIGKILL after a grace period) and then dev itself; a second
 * Ctrl-C kills at once. The child stops when dev goes away however it goes (its IPC pipe closes,
 * see parent.ts), and dev stops when the npm that started it does. docs/reference/cli.md.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { watch, type FSWatcher } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureDevSecrets } from '../auth/secrets.js';
import { projectDirOf, type Args } from './args.js';
import { TypeChecker, type TypeCheckError } from './dev/typecheck.js';
import { onParentGone } from './parent.js';

const BIN = fileURLToPath(new URL('../../bin/tablebase.mjs', import.meta.url));

/** Saves come in bursts (an editor writes a temp file, then renames): restart once per burst. */
const DEBOUNCE_MS = 100;
/** How long a child may take to close gracefully before it is killed. */
const GRACE_MS = 5_000;
/** Paths whose changes never restart: data, dependencies, generated migrations, secrets. */
const IGNORED = /(^|[/\\])(\.tablebase|node_modules|migrations|\.git)([/\\]|$)/;
/** Only code and settings restart the server (a log file written into the project must not). */
const WATCHED = /\.([cm]?[jt]sx?|json)$/;

/** Set in the environment of a spare server process (see `spare` below and serve.ts). */
export const SPARE_ENV = 'TABLEBASE_DEV_SPARE';

const say = (line: string) => console.log(`[dev] ${line}`);

export async function dev(args: Args, argv: readonly string[]): Promise<void> {
  const projectDir = resolve(projectDirOf(args));
  const made = ensureDevSecrets(projectDir);
  if (made.wrote.length) say(`Wrote random ${made.wrote.join(' and ')} to ${made.path} (development only).`);
  const childArgv = [BIN, '__run-dev', ...argv.slice(1)];

  let child: ChildProcess | undefined;
  let restartWhenDown = false;
  let stopping = false;
  let killTimer: NodeJS.Timeout | undefined;
  let debounce: NodeJS.Timeout | undefined;

  const checker = new TypeChecker(projectDir, reportTypes);
  let typesDue = checker.enabled;
  const checkTypesLater = () => {
    if (!typesDue || stopping) return;
    typesDue = false;
    checker.run();
  };

  /**
   * A spare server process: started once a server listens, it loads Tablebase's modules and waits
   * for `go` before it reads the project. A restart hands over to it instead of paying Node's and
   * the modules' start-up again (the spare never loaded the project, so the saved change is read
   * fresh). Costs one idle process while dev runs.
   */
  let spare: ChildProcess | undefined;

  const spawnServer = (asSpare: boolean) => {
    // stdin stays with dev; the IPC channel (fd 3) tells the child when dev is gone.
    const c = spawn(process.execPath, childArgv, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: asSpare ? { ...process.env, [SPARE_ENV]: '1' } : process.env });
    c.on('error', (err) => say(`could not start the server: ${err.message}`));
    // The type check and the next spare wait for the server to listen (or fail): on two busy
    // cores, running them at once delays the moment the saved change is served.
    c.on('message', (m) => {
      if (c !== child || (m as { tablebase?: string } | null)?.tablebase !== 'listening') return;
      checkTypesLater();
      prepareSpare();
    });
    c.once('exit', (code, signal) => {
      if (c === spare) spare = undefined;
      if (c !== child) return;
      child = undefined;
      clearTimeout(killTimer);
      if (stopping) return finish();
      if (restartWhenDown) {
        restartWhenDown = false;
        return start();
      }
      checkTypesLater();
      prepareSpare(); // so the fix is served as fast as any restart
      const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      say(`the server ${how}. Fix the problem and save a file: dev restarts on the next change (Ctrl-C quits).`);
    });
    return c;
  };

  const prepareSpare = () => {
    if (!stopping && !spare) spare = spawnServer(true);
  };

  const start = () => {
    const ready = spare;
    spare = undefined;
    if (ready && ready.connected && ready.exitCode === null && ready.signalCode === null) {
      child = ready;
      ready.send({ tablebase: 'go' });
    } else {
      if (ready) ready.kill('SIGKILL');
      child = spawnServer(false);
    }
  };

  const terminate = (c: ChildProcess) => {
    if (c.exitCode !== null || c.signalCode !== null) return;
    c.kill('SIGTERM');
    clearTimeout(killTimer);
    killTimer = setTimeout(() => c.kill('SIGKILL'), GRACE_MS);
  };

  const restart = (file: string) => {
    if (stopping) return;
    say(`${file} changed: restarting`);
    checker.cancel();
    typesDue = true;
    if (child) {
      restartWhenDown = true;
      terminate(child);
    } else start();
  };

  const finish = () => {
    checker.cancel();
    process.exit(0);
  };

  const stop = (why: string) => {
    if (stopping) {
      // Asked twice (a second Ctrl-C): no more waiting.
      child?.kill('SIGKILL');
      spare?.kill('SIGKILL');
      checker.cancel();
      process.exit(1);
    }
    stopping = true;
    say(`${why}: stopping`);
    spare?.kill('SIGKILL');
    clearTimeout(debounce);
    watcher.close();
    if (child) terminate(child);
    else finish();
  };

  const watcher: FSWatcher = watch(projectDir, { recursive: true }, (_event, file) => {
    if (!file || IGNORED.test(String(file)) || !WATCHED.test(String(file))) return;
    clearTimeout(debounce);
    debounce = setTimeout(() => restart(String(file)), DEBOUNCE_MS);
  });
  watcher.on('error', (err) => say(`watching ${projectDir} failed: ${err.message}`));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGHUP', () => stop('SIGHUP'));
  onParentGone(stop);
  // Last resort, whatever made dev exit: never leave a server behind.
  process.on('exit', () => {
    for (const c of [child, spare]) if (c && c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    checker.cancel();
  });

  start();
  if (!checker.enabled) say('no tsconfig.json (or no TypeScript) in the project: type errors are not checked.');

  function reportTypes(errors: TypeCheckError[] | undefined, raw: string) {
    if (errors === undefined) return say(`type check failed:\n${raw}`);
    if (!errors.length) return say('type check: no errors');
    const lines = errors.map((e) => `  ${e.file}:${e.line}:${e.column}  ${e.message}`);
    say(`type check: ${errors.length} error${errors.length === 1 ? '' : 's'} (the server runs anyway; fix before deploying)\n${lines.join('\n')}`);
  }
}
