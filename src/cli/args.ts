/**
 * A strict argv parser: every command declares its flags, and anything else stops the command
 * with a one-line message (issue #15 item 6: `serve --database postgres://…` must never quietly
 * start on SQLite because an unknown flag was skipped). Forms: `--flag value`, `--flag=value`,
 * `--switch`; `--` ends the flags.
 */
import type { Flags } from '../core/config.js';

export interface FlagSpec {
  readonly name: string;
  /** Placeholder shown in help (`DIR`, `URL`); absent for a switch that takes no value. */
  readonly value?: string;
  readonly help: string;
  /** Returns a one-line problem with the value, or undefined when it is fine. */
  readonly check?: (value: string) => string | undefined;
}

export interface Args {
  /** Positional words after the command (and sub-command) words. */
  readonly words: string[];
  readonly flags: Record<string, string | true>;
}

/** A mistake in how the command was called: printed as one line, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export function parseArgs(argv: readonly string[], specs: readonly FlagSpec[], command: string): Args {
  const words: string[] = [];
  const flags: Record<string, string | true> = {};
  const byName = new Map(specs.map((s) => [s.name, s]));
  const hint = `see \`tablebase ${command} --help\``;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      words.push(...argv.slice(i + 1));
      break;
    }
    if (!a.startsWith('-') || a === '-') {
      words.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = a.startsWith('--') ? a.slice(2, eq > 0 ? eq : undefined) : a;
    const spec = byName.get(name);
    // Only the flag's name is echoed: a mistyped `--databse=postgres://u:secret@…` must not print the secret.
    if (!spec) throw new UsageError(`unknown flag ${a.startsWith('--') ? `--${name}` : name} for \`${command}\` (${hint})`);
    if (name in flags) throw new UsageError(`--${name} given twice`);
    if (spec.value === undefined) {
      if (eq > 0) throw new UsageError(`--${name} takes no value`);
      flags[name] = true;
      continue;
    }
    let value: string | undefined;
    if (eq > 0) value = a.slice(eq + 1);
    else if (i + 1 < argv.length && !argv[i + 1]!.startsWith('--')) value = argv[++i]!;
    if (value === undefined || value === '') throw new UsageError(`--${name} needs a value: --${name} ${spec.value}`);
    const problem = spec.check?.(value);
    if (problem) throw new UsageError(problem);
    flags[name] = value;
  }
  return { words, flags };
}

export function flag(args: Args, name: string): string | undefined {
  const v = args.flags[name];
  return typeof v === 'string' ? v : undefined;
}

/** The folder named by --project, TABLEBASE_PROJECT, or the current one. */
export function projectDirOf(args: Args): string {
  return flag(args, 'project') ?? process.env.TABLEBASE_PROJECT ?? '.';
}

/** The flags resolveConfig reads (docs/reference/configuration.md: flags beat environment variables beat the config file). */
export function configFlags(args: Args, projectDir = projectDirOf(args)): Flags {
  return {
    project: projectDir,
    data: flag(args, 'data'),
    host: flag(args, 'host'),
    port: flag(args, 'port'),
    database: flag(args, 'database'),
    redis: flag(args, 'redis'),
    storage: flag(args, 'storage'),
    tlsCert: flag(args, 'tls-cert'),
    tlsKey: flag(args, 'tls-key'),
    backup: flag(args, 'backup'),
  };
}

/** True when argv asks for help (`--help`/`-h`) anywhere before `--`. */
export function wantsHelp(argv: readonly string[]): boolean {
  for (const a of argv) {
    if (a === '--') return false;
    if (a === '--help' || a === '-h') return true;
  }
  return false;
}

/** Help text: the usage line, then one line per flag. */
export function formatHelp(usage: string, summary: string, specs: readonly FlagSpec[]): string {
  const left = specs.map((s) => `--${s.name}${s.value ? ` ${s.value}` : ''}`);
  const width = Math.max(12, ...left.map((l) => l.length)) + 2;
  const lines = specs.map((s, i) => `  ${left[i]!.padEnd(width)}${s.help}`);
  return `Usage: tablebase ${usage}\n\n${summary}\n\nFlags:\n${lines.join('\n')}\n  ${'--help'.padEnd(width)}show this help`;
}
