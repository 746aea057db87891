/** The command table seen from outside: every command refuses what it does not understand. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { COMMANDS } from './commands.js';
import { runCli } from './main.js';

let out: string[];
let err: string[];
beforeEach(() => {
  out = [];
  err = [];
  vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.join(' ')));
  vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void err.push(a.join(' ')));
});
afterEach(() => vi.restoreAllMocks());

const words = (name: string) => name.split(' ');

describe('tablebase CLI', () => {
  it('prints an overview listing the visible commands', async () => {
    expect(await runCli(['--help'])).toBe(0);
    for (const c of COMMANDS) expect(out.join('\n').includes(`  ${c.name}`)).toBe(!c.hidden);
  });

  it.each(COMMANDS.map((c) => [c.name, c] as const))('`%s --help` lists its flags', async (_name, c) => {
    expect(await runCli([...words(c.name), '--help'])).toBe(0);
    const text = out.join('\n');
    expect(text).toContain(`Usage: tablebase ${c.name}`);
    for (const f of c.flags) expect(text).toContain(`--${f.name}`);
    expect(err).toEqual([]);
  });

  it.each(COMMANDS.map((c) => [c.name, c] as const))('`%s` stops on an unknown flag with one line and exit 2', async (_name, c) => {
    const operand = c.positionals ? ['dir'] : [];
    expect(await runCli([...words(c.name), ...operand, '--no-such-flag', 'x'])).toBe(2);
    expect(err).toEqual([`tablebase: unknown flag --no-such-flag for \`${c.name}\` (see \`tablebase ${c.name} --help\`)`]);
  });

  it.each([
    [['serve', '--database', 'mysql://root:hunter2@db/app'], '--database must be a postgres:// or postgresql:// URL (leave it unset for SQLite), not mysql://…'],
    [['dev', '--database=sqlite:data.db'], '--database must be a postgres:// or postgresql:// URL (leave it unset for SQLite), not sqlite:…'],
    [['serve', '--database', 'postgres:app'], '--database must be a postgres:// or postgresql:// URL (leave it unset for SQLite): postgres://host/...'],
    [['migrate', 'apply', '--database', 'not a url'], '--database must be a postgres:// or postgresql:// URL (leave it unset for SQLite); the value given is not a URL'],
    [['serve', '--redis', 'http://cache:6379'], '--redis must be a redis:// or rediss:// URL, not http://…'],
    [['serve', '--port', '99999'], '--port must be a whole number from 0 to 65535, not "99999"'],
    [['serve', '--port'], '--port needs a value: --port PORT'],
    [['openapi', '--format', 'xml'], '--format must be json or yaml, not "xml"'],
    [['serve', 'postgres://u:pw@h/db'], 'unexpected argument "postgres://…" for `serve`'],

    [['migrate'], '`migrate` needs a sub-command: generate, apply, status (see `tablebase migrate generate --help`)'],
    [['gen', 'server'], '`gen` has no sub-command "server": client (see `tablebase gen client --help`)'],
    [['frobnicate'], 'unknown command "frobnicate" (see `tablebase --help`)'],
  ])('%j is refused with one line', async (argv, message) => {
    expect(await runCli(argv)).toBe(2);
    expect(err).toEqual([`tablebase: ${message}`]);
    expect(err.join('')).not.toMatch(/hunter2|pw@/);
  });

  it('accepts postgres://, postgresql://, redis:// and rediss:// URLs at parse time', async () => {
    // --help after valid flags: parsing is not reached, so check the flags' own checks directly.
    const serve = COMMANDS.find((c) => c.name === 'serve')!;
    const check = (name: string, v: string) => serve.flags.find((f) => f.name === name)!.check!(v);
    expect(check('database', 'postgres://postgres@127.0.0.1:5432/app')).toBeUndefined();
    expect(check('database', 'postgresql://u:p@db.example/app?sslmode=require')).toBeUndefined();
    expect(check('redis', 'redis://127.0.0.1:6379/0')).toBeUndefined();
    expect(check('redis', 'rediss://cache.example:6380')).toBeUndefined();
  });
});
