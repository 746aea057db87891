/**
 * `dev`'s type check (issue #27 item 8): tsx strips types without checking them, so a misspelt
 * column (`row.author`) runs until it fails at request time. After every start and saved change
 * `dev` runs the project's own `tsc --noEmit -p <project>` beside the server and prints each error
 * as `file:line:col message`. It reports; it never blocks a restart (the server may well run).
 * Skipped when the project has no tsconfig.json or no TypeScript installed. docs/reference/cli.md.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { setPriority } from 'node:os';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';

export interface TypeCheckError {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly message: string;
}

/** The TypeScript compiler the project installed, else the one beside Tablebase; undefined if none. */
export function findTsc(projectDir: string): string | undefined {
  for (const from of [join(projectDir, 'package.json'), import.meta.filename]) {
    try {
      return createRequire(from).resolve('typescript/bin/tsc');
    } catch {
      // not installed there; try the next place
    }
  }
  return undefined;
}

/** `file(line,col): error TS1234: message` lines of `tsc --pretty false`; continuation lines join the message. */
export function parseTscOutput(text: string, projectDir: string): TypeCheckError[] {
  const errors: TypeCheckError[] = [];
  for (const line of text.split(/\r?\n/)) {
    const m = /^(.+?)\((\d+),(\d+)\): error (TS\d+: .*)$/.exec(line);
    if (m) errors.push({ file: relative(projectDir, join(projectDir, m[1]!)) || m[1]!, line: Number(m[2]), column: Number(m[3]), message: m[4]! });
    else if (/^\s+\S/.test(line) && errors.length) {
      const last = errors.pop()!;
      errors.push({ ...last, message: `${last.message} ${line.trim()}` });
    }
  }
  return errors;
}

/** One type check at a time: a newer change cancels the run still going. */
export class TypeChecker {
  #running: ChildProcess | undefined;
  readonly #tsc: string | undefined;

  constructor(
    private readonly projectDir: string,
    private readonly report: (errors: TypeCheckError[] | undefined, raw: string) => void,
  ) {
    this.#tsc = existsSync(join(projectDir, 'tsconfig.json')) ? findTsc(projectDir) : undefined;
  }

  get enabled(): boolean {
    return this.#tsc !== undefined;
  }

  run(): void {
    if (!this.#tsc) return;
    this.cancel();
    const child = spawn(process.execPath, [this.#tsc, '--noEmit', '-p', this.projectDir, '--pretty', 'false'], { cwd: this.projectDir, stdio: ['ignore', 'pipe', 'pipe'] });
    this.#running = child;
    // Below the server in the scheduler: a restart is served first, the report follows.
    try {
      if (child.pid) setPriority(child.pid, 10);
    } catch {
      // not permitted here; run at normal priority
    }
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    child.on('error', () => undefined);
    child.once('exit', (code, signal) => {
      if (this.#running !== child) return; // cancelled: a newer run reports
      this.#running = undefined;
      if (signal) return;
      const errors = parseTscOutput(out, this.projectDir);
      // A non-zero exit with nothing parsed (a broken tsconfig) is shown raw.
      this.report(code === 0 ? [] : errors.length ? errors : undefined, out.trim());
    });
  }

  cancel(): void {
    const c = this.#running;
    this.#running = undefined;
    if (c && c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  }
}
