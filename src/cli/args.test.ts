import { describe, expect, it } from 'vitest';
import { formatHelp, parseArgs, UsageError, wantsHelp, type FlagSpec } from './args.js';

const specs: FlagSpec[] = [
  { name: 'project', value: 'DIR', help: 'project folder' },
  { name: 'port', value: 'PORT', help: 'port', check: (v) => (/^\d+$/.test(v) ? undefined : `--port must be a number, not "${v}"`) },
  { name: 'force', help: 'overwrite' },
];
const parse = (...argv: string[]) => parseArgs(argv, specs, 'serve');
const refusal = (...argv: string[]) => {
  try {
    parse(...argv);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error('expected a UsageError');
};

describe('parseArgs', () => {
  it('reads --flag value, --flag=value, switches and positional words', () => {
    expect(parse('a', '--project', 'p', '--port=80', '--force', 'b')).toEqual({ words: ['a', 'b'], flags: { project: 'p', port: '80', force: true } });
  });

  it('treats everything after -- as positional', () => {
    expect(parse('--force', '--', '--project', 'x')).toEqual({ words: ['--project', 'x'], flags: { force: true } });
  });

  it('refuses an unknown flag, naming it and the command, never echoing its value', () => {
    const m = refusal('--databse=postgres://u:secret@h/db');
    expect(m).toBe('unknown flag --databse for `serve` (see `tablebase serve --help`)');
    expect(refusal('-p', '80')).toContain('unknown flag -p');
  });

  it('refuses a missing value, a value on a switch, a repeated flag and a value its check rejects', () => {
    expect(refusal('--project')).toBe('--project needs a value: --project DIR');
    expect(refusal('--project', '--force')).toBe('--project needs a value: --project DIR');
    expect(refusal('--project=')).toBe('--project needs a value: --project DIR');
    expect(refusal('--force=yes')).toBe('--force takes no value');
    expect(refusal('--port', '1', '--port', '2')).toBe('--port given twice');
    expect(refusal('--port', 'eighty')).toBe('--port must be a number, not "eighty"');
  });
});

describe('help', () => {
  it('wantsHelp sees --help and -h before --', () => {
    expect(wantsHelp(['--port', '1', '--help'])).toBe(true);
    expect(wantsHelp(['-h'])).toBe(true);
    expect(wantsHelp(['--', '--help'])).toBe(false);
  });

  it('lists every flag with its placeholder and help', () => {
    const text = formatHelp('serve [flags]', 'Serves.', specs);
    expect(text).toMatch(/^Usage: tablebase serve \[flags\]/);
    expect(text).toMatch(/--project DIR +project folder/);
    expect(text).toMatch(/--force +overwrite/);
    expect(text).toMatch(/--help +show this help/);
  });
});
