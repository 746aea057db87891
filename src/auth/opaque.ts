/**
 * Opaque tokens (refresh, email verification, password reset; docs/reference/auth.md): 32 random bytes as
 * base64url, handed to the client once and stored only as their SHA-256. A database leak then
 * yields nothing usable, and since the token carries 256 bits of entropy a plain (unsalted,
 * unkeyed) hash is enough — there is nothing to brute-force. Lookups go by the hash through a
 * unique index, so no secret is ever compared byte by byte in application code.
 */
import { createHash, randomBytes } from 'node:crypto';

export const OPAQUE_TOKEN_BYTES = 32;
/** base64url of 32 bytes, no padding. */
const SHAPE = /^[A-Za-z0-9_-]{43}$/;

export function newOpaqueToken(): string {
  return randomBytes(OPAQUE_TOKEN_BYTES).toString('base64url');
}

/** True for a string shaped like one of our tokens; anything else is refused before hashing. */
export function isOpaqueToken(token: unknown): token is string {
  return typeof token === 'string' && SHAPE.test(token);
}

/** Hex SHA-256: what the database stores and is searched by. */
export function hashOpaqueToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
