/**
 * The two server secrets (docs/reference/configuration.md "Secrets"): `JWT_SECRET` signs access
 * tokens, `PASSWORD_SECRET` peppers password hashes. Both come from the environment, or from
 * `<project>/.env` when the environment lacks them (the environment wins). `serve` refuses to
 * start with a one-line message when one is missing, shorter than 32 characters, or when both are
 * equal (one leaked secret must not give away the other). Messages name the variable, never its
 * value.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, constants, existsSync, fchmodSync, fstatSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { parseDotenv } from './dotenv.js';

export const SECRET_NAMES = ['JWT_SECRET', 'PASSWORD_SECRET'] as const;
export type SecretName = (typeof SECRET_NAMES)[number];

export interface Secrets {
  readonly jwtSecret: string;
  readonly passwordSecret: string;
}

export const MIN_SECRET_LENGTH = 32;
/** A `.env` bigger than this is not a config file; refuse rather than read it into memory. */
const MAX_DOTENV_BYTES = 1024 * 1024;

/** A configuration problem the CLI prints as-is (one line, no stack). */
export class SecretsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretsError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

/** The parsed `.env` of `projectDir`, or an empty map when there is none. */
export function readDotenv(projectDir: string): Record<string, string> {
  const path = join(projectDir, '.env');
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return Object.create(null) as Record<string, string>;
    throw new SecretsError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new SecretsError(`${path} is not a regular file`);
    if (st.size > MAX_DOTENV_BYTES) throw new SecretsError(`${path} is larger than 1 MiB`);
    return parseDotenv(readFileSync(fd, 'utf8'));
  } finally {
    closeSync(fd);
  }
}

/** Length in characters (code points), as docs/reference/auth.md says "characters". */
function charLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/**
 * Reads and validates both secrets. Throws SecretsError with a one-line message naming the
 * offending variable (never its value).
 */
export function loadSecrets(env: Env, projectDir: string): Secrets {
  let file: Record<string, string> | undefined;
  const read = (name: SecretName): string => {
    const fromEnv = env[name];
    // An empty variable counts as unset, so `JWT_SECRET= tablebase serve` falls back to .env.
    if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
    file ??= readDotenv(projectDir);
    const fromFile = file[name];
    if (fromFile === undefined || fromFile === '') {
      throw new SecretsError(`${name} is not set: set it in the environment or in ${join(projectDir, '.env')} (at least ${MIN_SECRET_LENGTH} characters)`);
    }
    return fromFile;
  };
  const jwtSecret = read('JWT_SECRET');
  const passwordSecret = read('PASSWORD_SECRET');
  for (const [name, value] of [
    ['JWT_SECRET', jwtSecret],
    ['PASSWORD_SECRET', passwordSecret],
  ] as const) {
    if (charLength(value) < MIN_SECRET_LENGTH) throw new SecretsError(`${name} is too short: it must be at least ${MIN_SECRET_LENGTH} characters`);
  }
  if (jwtSecret === passwordSecret) throw new SecretsError('JWT_SECRET and PASSWORD_SECRET must be different');
  return Object.freeze({ jwtSecret, passwordSecret });
}

export interface DevSecretsResult {
  /** Path of the project's `.env`. */
  readonly path: string;
  /** True when `.env` did not exist and was created. */
  readonly created: boolean;
  /** The variables written (appended to an existing `.env`, or in the new one). Empty: nothing written. */
  readonly wrote: readonly SecretName[];
}

function randomSecret(): string {
  return randomBytes(48).toString('base64url'); // 64 characters, 384 bits
}

/**
 * For `tablebase dev` (docs/reference/configuration.md): makes sure both secrets exist, writing random ones to the
 * project's `.env` for each missing from the environment and from `.env`. A new `.env` is created
 * exclusively (never following or replacing an existing file) with mode 0600. Secrets that exist
 * but are invalid are left alone: loadSecrets reports them.
 */
export function ensureDevSecrets(projectDir: string, env: Env = process.env, creator = 'tablebase dev'): DevSecretsResult {
  const path = join(projectDir, '.env');
  const existing = existsSync(path) ? readDotenv(projectDir) : undefined;
  const missing = SECRET_NAMES.filter((name) => !env[name] && !existing?.[name]);
  if (missing.length === 0) return { path, created: false, wrote: [] };
  const lines = missing.map((name) => `${name}=${randomSecret()}`).join('\n') + '\n';
  if (existing === undefined) {
    const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    try {
      fchmodSync(fd, 0o600); // the umask may only remove bits, but be explicit
      writeSync(fd, `# Created by \`${creator}\`: random development secrets. Keep this file out of version control.\n${lines}`);
    } finally {
      closeSync(fd);
    }
    return { path, created: true, wrote: missing };
  }
  // Append to the file itself, never through a symlink; start on a fresh line.
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDWR | constants.O_APPEND | (constants.O_NOFOLLOW ?? 0));
  } catch (err) {
    throw new SecretsError(`cannot add ${missing.join(' and ')} to ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'}); add them yourself`);
  }
  try {
    const size = fstatSync(fd).size;
    const last = Buffer.alloc(1);
    const needsNewline = size > 0 && readSync(fd, last, 0, 1, size - 1) === 1 && last[0] !== 0x0a;
    writeSync(fd, (needsNewline ? '\n' : '') + lines);
  } finally {
    closeSync(fd);
  }
  return { path, created: false, wrote: missing };
}
