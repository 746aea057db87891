/**
 * Password hashing (docs/reference/auth.md): Argon2id through `@node-rs/argon2`, whose
 * async functions run on libuv's thread pool, so a sign-in never blocks the event loop. Every
 * hash is peppered with `PASSWORD_SECRET` through Argon2's own secret input (RFC 9106 §3.1, "K"),
 * so a stolen database alone cannot be brute-forced offline.
 *
 * Cost: m = 19 MiB, t = 2, p = 1 — the OWASP Password Storage Cheat Sheet's Argon2id minimum.
 *
 * Passwords are NFC-normalized before hashing so the same password typed on two keyboards
 * (precomposed "é" versus "e" + combining accent) matches (NIST SP 800-63B §5.1.1.2).
 */
import { createRequire } from 'node:module';
import type * as Argon2 from '@node-rs/argon2';
import type { Algorithm, Options } from '@node-rs/argon2';
import { randomBytes } from 'node:crypto';
import { ApiError } from '../core/errors.js';

// Loaded on first use, not at start (issue #25: a start loads only what the first request needs).
let argon2: typeof Argon2 | undefined;
const lib = (): typeof Argon2 => (argon2 ??= createRequire(import.meta.url)('@node-rs/argon2') as typeof Argon2);

// `Algorithm` is an ambient const enum, which isolatedModules cannot read; 2 is Argon2id.
const ARGON2ID = 2 as Algorithm;

export const ARGON2_PARAMS = Object.freeze({ memoryCost: 19_456, timeCost: 2, parallelism: 1, outputLen: 32 });

/**
 * A stored hash whose parameters exceed these is refused rather than verified: a tampered row
 * must not make one sign-in allocate gigabytes or spin for minutes.
 */
const MAX_STORED = { memoryCost: 262_144, timeCost: 16, parallelism: 8, length: 512 };

function options(pepper: string | Uint8Array): Options {
  return { ...ARGON2_PARAMS, algorithm: ARGON2ID, secret: typeof pepper === 'string' ? Buffer.from(pepper, 'utf8') : pepper };
}

/** An Argon2id PHC string (`$argon2id$v=19$m=19456,t=2,p=1$salt$hash`). */
export async function hashPassword(password: string, pepper: string | Uint8Array): Promise<string> {
  return lib().hash(password.normalize('NFC'), options(pepper));
}

/** Parameters of a stored hash when it is an Argon2id hash we are willing to verify, else null. */
function storedParams(stored: unknown): ReturnType<typeof Argon2.parseOptions> | null {
  if (typeof stored !== 'string' || stored.length > MAX_STORED.length || !stored.startsWith('$argon2id$')) return null;
  try {
    const p = lib().parseOptions(stored);
    if (p.memoryCost > MAX_STORED.memoryCost || p.timeCost > MAX_STORED.timeCost || p.parallelism > MAX_STORED.parallelism) return null;
    return p;
  } catch {
    return null;
  }
}

/**
 * True when `password` matches `stored` under `pepper`. Never throws: a missing, malformed or
 * foreign stored hash answers false (callers turn that into INVALID_CREDENTIALS).
 */
export async function verifyPassword(stored: unknown, password: string, pepper: string | Uint8Array): Promise<boolean> {
  if (storedParams(stored) === null) return false;
  try {
    return await lib().verify(stored as string, password.normalize('NFC'), { secret: options(pepper).secret });
  } catch {
    return false;
  }
}

let dummy: Promise<string> | undefined;

/**
 * Burns the same time as verifying a real password and answers false. Sign-in calls it for an
 * unknown email so the answer's timing does not reveal which accounts exist (docs/reference/conventions.md,
 * INVALID_CREDENTIALS: "comparable time for an unknown email and a wrong password"). The dummy
 * hash has the current parameters and a random password and pepper, so nothing can match it.
 */
export async function verifyDummyPassword(password: string, pepper: string | Uint8Array): Promise<false> {
  dummy ??= lib().hash(randomBytes(32), options(randomBytes(32)));
  await verifyPassword(await dummy, password, pepper);
  return false;
}

/** True when `stored` was made with weaker parameters than today's (rehash it after a good sign-in). */
export function needsRehash(stored: string): boolean {
  const p = storedParams(stored);
  if (p === null) return true;
  return p.memoryCost < ARGON2_PARAMS.memoryCost || p.timeCost < ARGON2_PARAMS.timeCost || p.outputLen < ARGON2_PARAMS.outputLen;
}

/**
 * Checks a client-supplied password before anything is hashed, so nobody can make the server
 * hash megabytes (docs/reference/auth.md: 8 to 1024 characters by default). Length is counted in characters
 * (code points). Throws 400 BAD_REQUEST with `details` at `path`; answers the password.
 */
export function validatePasswordLength(password: unknown, min = 8, max = 1024, path = '/password'): string {
  if (typeof password !== 'string') throw new ApiError('BAD_REQUEST', 'password must be a string', { details: [{ path, message: 'must be a string' }] });
  // Code points lie between length/2 and length: decide the clear cases without walking a
  // hostile megabyte string.
  const n = password.length > 2 * max ? Infinity : password.length < min ? password.length : codePoints(password);
  if (n < min || n > max) {
    const message = `must be between ${min} and ${max} characters`;
    throw new ApiError('BAD_REQUEST', `password ${message}`, { details: [{ path, message }] });
  }
  return password;
}

/** True when `password` is a string within the length bounds (sign-in: no hashing of oversized input). */
export function passwordWithinBounds(password: unknown, min = 1, max = 1024): password is string {
  try {
    validatePasswordLength(password, min, max);
    return true;
  } catch {
    return false;
  }
}

function codePoints(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // A high surrogate followed by a low one is one character.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}
