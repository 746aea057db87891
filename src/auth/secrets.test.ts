import { mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseDotenv } from './dotenv.js';
import { ensureDevSecrets, loadSecrets, SecretsError } from './secrets.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tb-secrets-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function errorOf(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a throw');
}

describe('parseDotenv', () => {
  it('reads plain, quoted, exported and commented assignments', () => {
    const env = parseDotenv(
      [
        '# a comment',
        'PLAIN=value',
        '  SPACED  =  spaced value   ',
        'export EXPORTED=yes',
        "SINGLE='lit\\n # not a comment'",
        'DOUBLE="line1\\nline2 \\"q\\""',
        'INLINE=abc # trailing comment',
        'HASHY=abc#def',
        'EMPTY=',
        'not an assignment',
        '1BAD=x',
        'CRLF=windows\r',
      ].join('\n'),
    );
    expect(env.PLAIN).toBe('value');
    expect(env.SPACED).toBe('spaced value');
    expect(env.EXPORTED).toBe('yes');
    expect(env.SINGLE).toBe('lit\\n # not a comment');
    expect(env.DOUBLE).toBe('line1\nline2 "q"');
    expect(env.INLINE).toBe('abc');
    expect(env.HASHY).toBe('abc#def');
    expect(env.EMPTY).toBe('');
    expect(env.CRLF).toBe('windows');
    expect(Object.keys(env)).not.toContain('1BAD');
  });

  it('reads a double-quoted value over several lines and goes on after it', () => {
    const env = parseDotenv('KEY="first\nsecond"\nNEXT=1\n');
    expect(env.KEY).toBe('first\nsecond');
    expect(env.NEXT).toBe('1');
  });

  it('treats __proto__ as an ordinary key and expands nothing', () => {
    const env = parseDotenv('__proto__=x\nA=$HOME\nB=`whoami`');
    expect(Object.getPrototypeOf(env)).toBeNull();
    expect(env.__proto__).toBe('x');
    expect(env.A).toBe('$HOME');
    expect(env.B).toBe('`whoami`');
  });
});

describe('loadSecrets', () => {
  it('reads both from the environment', () => {
    expect(loadSecrets({ JWT_SECRET: A, PASSWORD_SECRET: B }, dir)).toEqual({ jwtSecret: A, passwordSecret: B });
  });

  it('falls back to <project>/.env, and the environment wins', () => {
    writeFileSync(join(dir, '.env'), `JWT_SECRET="${'f'.repeat(40)}"\nPASSWORD_SECRET=${B}\n`);
    expect(loadSecrets({}, dir)).toEqual({ jwtSecret: 'f'.repeat(40), passwordSecret: B });
    expect(loadSecrets({ JWT_SECRET: A }, dir)).toEqual({ jwtSecret: A, passwordSecret: B });
    // An empty variable counts as unset.
    expect(loadSecrets({ JWT_SECRET: '' }, dir).jwtSecret).toBe('f'.repeat(40));
  });

  it('names a missing variable in one line', () => {
    const err = errorOf(() => loadSecrets({ JWT_SECRET: A }, dir));
    expect(err).toBeInstanceOf(SecretsError);
    expect(err.message).toMatch(/^PASSWORD_SECRET is not set/);
    expect(err.message).not.toContain('\n');
  });

  it('refuses a short secret, naming it without printing it', () => {
    const short = 'shortsecret-XYZ-0123456789abcde'; // 31 characters
    const err = errorOf(() => loadSecrets({ JWT_SECRET: short, PASSWORD_SECRET: B }, dir));
    expect(err.message).toBe('JWT_SECRET is too short: it must be at least 32 characters');
    expect(err.message).not.toContain(short);
    expect(() => loadSecrets({ JWT_SECRET: A, PASSWORD_SECRET: short }, dir)).toThrow(/^PASSWORD_SECRET is too short/);
    // 32 characters pass; length is counted in characters, not bytes or UTF-16 units.
    expect(() => loadSecrets({ JWT_SECRET: 'x'.repeat(32), PASSWORD_SECRET: B }, dir)).not.toThrow();
    expect(() => loadSecrets({ JWT_SECRET: '😀'.repeat(31), PASSWORD_SECRET: B }, dir)).toThrow(/JWT_SECRET is too short/);
  });

  it('refuses equal secrets without printing them', () => {
    const err = errorOf(() => loadSecrets({ JWT_SECRET: A, PASSWORD_SECRET: A }, dir));
    expect(err.message).toBe('JWT_SECRET and PASSWORD_SECRET must be different');
  });
});

describe('ensureDevSecrets', () => {
  it('creates a 0600 .env with two different random secrets that loadSecrets accepts', () => {
    const r = ensureDevSecrets(dir, {});
    expect(r).toEqual({ path: join(dir, '.env'), created: true, wrote: ['JWT_SECRET', 'PASSWORD_SECRET'] });
    if (process.platform !== 'win32') expect(statSync(r.path).mode & 0o777).toBe(0o600);
    const s = loadSecrets({}, dir);
    expect(s.jwtSecret.length).toBeGreaterThanOrEqual(32);
    expect(s.jwtSecret).not.toBe(s.passwordSecret);
    // Idempotent: a second run writes nothing and keeps the secrets.
    expect(ensureDevSecrets(dir, {})).toEqual({ path: r.path, created: false, wrote: [] });
    expect(loadSecrets({}, dir)).toEqual(s);
  });

  it('appends only what is missing to an existing .env and keeps the rest', () => {
    writeFileSync(join(dir, '.env'), `OTHER=1\nJWT_SECRET=${A}`);
    const r = ensureDevSecrets(dir, {});
    expect(r.created).toBe(false);
    expect(r.wrote).toEqual(['PASSWORD_SECRET']);
    const text = readFileSync(r.path, 'utf8');
    expect(text.startsWith(`OTHER=1\nJWT_SECRET=${A}\nPASSWORD_SECRET=`)).toBe(true);
    expect(loadSecrets({}, dir).jwtSecret).toBe(A);
  });

  it('never appends through a symlink', () => {
    if (process.platform === 'win32') return;
    writeFileSync(join(dir, 'elsewhere'), 'OTHER=1\n');
    symlinkSync(join(dir, 'elsewhere'), join(dir, '.env'));
    expect(() => ensureDevSecrets(dir, {})).toThrow(SecretsError);
    expect(readFileSync(join(dir, 'elsewhere'), 'utf8')).toBe('OTHER=1\n');
  });

  it('writes nothing when the environment has both', () => {
    expect(ensureDevSecrets(dir, { JWT_SECRET: A, PASSWORD_SECRET: B }).wrote).toEqual([]);
    expect(() => statSync(join(dir, '.env'))).toThrow();
  });
});
