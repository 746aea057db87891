/**
 * Access tokens (docs/reference/auth.md): JWT, HS256, signed with `JWT_SECRET`. Claims: `sub` and `userId` (the
 * row id), `table`, `admin: {isAdmin}`, `iat`, `exp`, `jti`, plus the project's custom claims,
 * which can never override these. `jti` is `<sessionId>.<random>`, so a token leads to its session
 * and revocation is one in-memory lookup (revocation.ts).
 *
 * Verification accepts only HS256 (RFC 8725 §3.1: never let the token pick its algorithm, and
 * never `none`), requires every reserved claim with the right type, and refuses tokens of revoked
 * sessions. Verified tokens are cached by their exact text in a bounded LRU, so a client that
 * repeats its token skips the HMAC and JSON parsing; a cache hit still checks `exp` and
 * revocation, so the cache can never accept what a full verification would refuse.
 */
import { jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { randomBytes } from 'node:crypto';
import { ApiError } from '../core/errors.js';
import type { Jwt } from '../define/types.js';
import { Lru } from './lru.js';
import type { RevocationList } from './revocation.js';

/** Claims set by the server; RFC 7519 registered names too, so a custom `nbf`/`aud` cannot break tokens. */
export const RESERVED_CLAIMS: ReadonlySet<string> = new Set(['sub', 'userId', 'table', 'admin', 'iat', 'exp', 'jti', 'iss', 'aud', 'nbf', '__proto__']);
/** Longer tokens are refused before any parsing (bounded work on hostile input). */
export const MAX_TOKEN_LENGTH = 16 * 1024;

export interface AccessTokenInput {
  /** The signed-in row (only its id is used). */
  user: { id: string };
  /** The auth table's name. */
  table: string;
  isAdmin: boolean;
  sessionId: string;
  /** The project's `claims(user)` result; reserved names are dropped. */
  customClaims?: Record<string, unknown> | null;
  /** Lifetime in seconds, at most the configured access-token lifetime (the default). */
  ttlSeconds?: number;
}

export interface AccessTokensOptions {
  /** `JWT_SECRET`. */
  secret: string;
  /** The longest (and default) lifetime; the revocation list must remember at least this long. */
  ttlSeconds: number;
  revocations: RevocationList;
  /** Verified tokens kept (default 10,000; 0 disables the cache). */
  cacheSize?: number;
  /** Epoch milliseconds (injectable for tests). */
  now?: () => number;
}

interface Cached {
  readonly jwt: Jwt;
  readonly expMs: number;
  readonly sessionId: string;
}

const invalid = (): ApiError => new ApiError('INVALID_TOKEN');
const BEARER = /^Bearer +([^ ]+) *$/i;

/**
 * The token of an `Authorization: Bearer <token>` header. No header: null (rules see a null jwt;
 * docs/reference/conventions.md). Any other scheme, or an empty token: 401 INVALID_TOKEN.
 */
export function parseBearer(header: string | undefined): string | null {
  if (header === undefined) return null;
  const m = BEARER.exec(header);
  if (m === null) throw invalid();
  return m[1]!;
}

/** The session a verified token belongs to. */
export function sessionIdOf(jwt: Pick<Jwt, 'jti'>): string {
  const dot = jwt.jti.indexOf('.');
  if (dot <= 0) throw invalid();
  return jwt.jti.slice(0, dot);
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** The payload as a Jwt, or null when any reserved claim is missing or of the wrong type. */
function asJwt(p: JWTPayload): Jwt | null {
  const admin = p.admin as { isAdmin?: unknown } | null | undefined;
  if (typeof p.sub !== 'string' || p.sub === '' || p.userId !== p.sub) return null;
  if (typeof p.table !== 'string' || p.table === '') return null;
  if (admin === null || typeof admin !== 'object' || typeof admin.isAdmin !== 'boolean') return null;
  if (!Number.isSafeInteger(p.iat) || !Number.isSafeInteger(p.exp) || typeof p.jti !== 'string') return null;
  return p as Jwt;
}

export class AccessTokens {
  #key: Promise<CryptoKey>;
  #ttl: number;
  #revocations: RevocationList;
  #cache: Lru<string, Cached>;
  #now: () => number;

  constructor(options: AccessTokensOptions) {
    if (!Number.isSafeInteger(options.ttlSeconds) || options.ttlSeconds <= 0) throw new Error('AccessTokens: ttlSeconds must be a positive whole number');
    // Imported once as a non-extractable key: no per-request key import, and the raw secret is
    // not kept by this object.
    this.#key = crypto.subtle.importKey('raw', Buffer.from(options.secret, 'utf8'), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
    this.#ttl = options.ttlSeconds;
    this.#revocations = options.revocations;
    this.#cache = new Lru(options.cacheSize ?? 10_000);
    this.#now = options.now ?? Date.now;
  }

  get ttlSeconds(): number {
    return this.#ttl;
  }

  /** Signs an access token; `expiresIn` is its lifetime in seconds (docs/reference/photos.md). */
  async sign(input: AccessTokenInput): Promise<{ token: string; expiresIn: number }> {
    const ttl = input.ttlSeconds ?? this.#ttl;
    if (!Number.isSafeInteger(ttl) || ttl <= 0 || ttl > this.#ttl) {
      // Longer than the configured lifetime would outlive the revocation list's memory.
      throw new Error(`AccessTokens: ttlSeconds must be between 1 and ${this.#ttl}`);
    }
    const { id } = input.user;
    if (typeof id !== 'string' || id === '') throw new Error('AccessTokens: user.id must be a non-empty string');
    if (typeof input.sessionId !== 'string' || input.sessionId === '' || input.sessionId.includes('.')) {
      throw new Error('AccessTokens: sessionId must be a non-empty string without "."');
    }
    const iat = Math.floor(this.#now() / 1000);
    const payload: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(input.customClaims ?? {})) if (!RESERVED_CLAIMS.has(k)) payload[k] = v;
    Object.assign(payload, {
      sub: id,
      userId: id,
      table: input.table,
      admin: { isAdmin: input.isAdmin === true },
      iat,
      exp: iat + ttl,
      jti: `${input.sessionId}.${randomBytes(12).toString('base64url')}`,
    });
    const token = await new SignJWT(payload).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(await this.#key);
    return { token, expiresIn: ttl };
  }

  /**
   * The decoded token, or 401 INVALID_TOKEN when it is malformed, not HS256, badly signed,
   * expired, or its session was revoked. A cache hit answers synchronously.
   */
  verifyToken(token: string): Jwt | Promise<Jwt> {
    if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH) return Promise.reject(invalid());
    const hit = this.#cache.get(token);
    if (hit !== undefined) {
      if (hit.expMs <= this.#now() || this.#revocations.isRevoked(hit.sessionId)) {
        this.#cache.delete(token);
        return Promise.reject(invalid());
      }
      return hit.jwt;
    }
    return this.#verifySlow(token);
  }

  /**
   * Verifies an `Authorization` header value (core/runtime.ts TokenVerifier): null when none was
   * sent, the decoded token, or 401 INVALID_TOKEN.
   */
  verify(authorization: string | undefined): Jwt | null | Promise<Jwt | null> {
    let token: string | null;
    try {
      token = parseBearer(authorization);
    } catch (err) {
      return Promise.reject(err);
    }
    return token === null ? null : this.verifyToken(token);
  }

  /** Forgets every cached verification (e.g. after a secret rotation in tests). */
  clearCache(): void {
    this.#cache.clear();
  }

  async #verifySlow(token: string): Promise<Jwt> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, await this.#key, {
        algorithms: ['HS256'],
        currentDate: new Date(this.#now()),
        requiredClaims: ['sub', 'iat', 'exp', 'jti'],
      }));
    } catch {
      throw invalid();
    }
    const jwt = asJwt(payload);
    if (jwt === null) throw invalid();
    const sessionId = sessionIdOf(jwt);
    // Checked after the await: a revocation that landed meanwhile still wins.
    if (this.#revocations.isRevoked(sessionId)) throw invalid();
    deepFreeze(jwt);
    this.#cache.set(token, { jwt, expMs: jwt.exp * 1000, sessionId });
    return jwt;
  }
}
