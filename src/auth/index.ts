/**
 * The auth module's table of contents, and `createAuthServices`, which assembles its parts once
 * per server (src/server/app.ts): secrets → passwords (Argon2id + pepper), access tokens (JWT +
 * revocation list + verify cache), sessions (rotating refresh tokens), confirmation tokens, all
 * over one AuthStore. The flows (flows.ts: sign-up, sign-in, refresh, logout, verification,
 * reset) use only this; their routes are declared in src/http/routes/auth.ts.
 */
import type { AuthSettings } from '../define/project.js';
import type { Dialect } from '../storage/dialect.js';
import type { SqlRunner } from '../storage/driver.js';
import { ConfirmTokens } from './confirm-tokens.js';
import { AccessTokens } from './jwt.js';
import { hashPassword, needsRehash, validatePasswordLength, verifyDummyPassword, verifyPassword } from './passwords.js';
import { RevocationList } from './revocation.js';
import type { Secrets } from './secrets.js';
import { SessionManager, type WriteFn } from './sessions.js';
import { resolveAuthSettings, type ResolvedAuthSettings } from './settings.js';
import { SqlAuthStore } from './sql-store.js';
import { OtpCodes } from './otp.js';
import type { AuthStore } from './store.js';

export { ConfirmTokens, type ConfirmTokensOptions, type IssuedConfirmToken } from './confirm-tokens.js';
export { parseDotenv } from './dotenv.js';
export { AccessTokens, MAX_TOKEN_LENGTH, parseBearer, RESERVED_CLAIMS, sessionIdOf, type AccessTokenInput, type AccessTokensOptions } from './jwt.js';
export { hashOpaqueToken, isOpaqueToken, newOpaqueToken } from './opaque.js';
export { ARGON2_PARAMS, hashPassword, needsRehash, passwordWithinBounds, validatePasswordLength, verifyDummyPassword, verifyPassword } from './passwords.js';
export { RevocationList, type RevokedSession } from './revocation.js';
export { authInternalTables, authTokensTable, sessionsTable } from './schema.js';
export { ensureDevSecrets, loadSecrets, MIN_SECRET_LENGTH, SecretsError, type DevSecretsResult, type Secrets } from './secrets.js';
export { SessionManager, type RefreshedSession, type SessionManagerOptions, type StartedSession, type WriteFn } from './sessions.js';
export { AUTH_DEFAULTS, parseTtlSeconds, resolveAuthSettings, type ResolvedAuthSettings } from './settings.js';
export { SqlAuthStore } from './sql-store.js';
export { OtpCodes, OTP_MAX_ATTEMPTS, OTP_TTL_SECONDS } from './otp.js';
export type * from './store.js';

/** Password operations with the pepper and the project's length bounds bound in. */
export interface PasswordService {
  hash(password: string): Promise<string>;
  verify(stored: unknown, password: string): Promise<boolean>;
  /** For unknown emails: same cost as `verify`, always false. */
  verifyDummy(password: string): Promise<false>;
  /** 400 BAD_REQUEST at `path` unless within the project's bounds; call before hashing. */
  validate(password: unknown, path?: string): string;
  needsRehash(stored: string): boolean;
}

export interface AuthServices {
  readonly settings: ResolvedAuthSettings;
  readonly store: AuthStore;
  readonly passwords: PasswordService;
  readonly revocations: RevocationList;
  /** Also the runtime's TokenVerifier (`verify(authorization)`). */
  readonly tokens: AccessTokens;
  readonly sessions: SessionManager;
  readonly confirmTokens: ConfirmTokens;
  /** One-time sign-in codes (docs/reference/auth.md). */
  readonly otp: OtpCodes;
  /** Loads recent revocations from storage; call once before serving requests. */
  start(): Promise<void>;
}

export interface AuthServicesOptions {
  secrets: Secrets;
  settings?: AuthSettings;
  dialect: Dialect;
  /** Reads (the driver). */
  reader: SqlRunner;
  /** Writes: `(fn) => writer.submit((tx) => fn(tx))`. */
  write: WriteFn;
  /** Verified access tokens kept in memory (default 10,000). */
  tokenCacheSize?: number;
  /** Epoch milliseconds (injectable for tests). */
  now?: () => number;
  newId?: (prefix: string) => string;
}

export function createAuthServices(o: AuthServicesOptions): AuthServices {
  const settings = resolveAuthSettings(o.settings);
  const now = o.now ?? Date.now;
  const store = new SqlAuthStore(o.dialect);
  const pepper = Buffer.from(o.secrets.passwordSecret, 'utf8');
  const revocations = new RevocationList(settings.accessTokenTtlSeconds, now);
  const tokens = new AccessTokens({ secret: o.secrets.jwtSecret, ttlSeconds: settings.accessTokenTtlSeconds, revocations, cacheSize: o.tokenCacheSize, now });
  const sessions = new SessionManager({
    store,
    reader: o.reader,
    write: o.write,
    revocations,
    refreshTokenTtlSeconds: settings.refreshTokenTtlSeconds,
    now,
    newId: o.newId,
  });
  const confirmTokens = new ConfirmTokens({
    store,
    write: o.write,
    verifyTokenTtlSeconds: settings.verifyTokenTtlSeconds,
    resetTokenTtlSeconds: settings.resetTokenTtlSeconds,
    now,
    newId: o.newId,
  });
  const otp = new OtpCodes({ dialect: o.dialect, write: o.write, secret: o.secrets.passwordSecret, now, newId: o.newId });
  const passwords: PasswordService = Object.freeze({
    hash: (password: string) => hashPassword(password, pepper),
    verify: (stored: unknown, password: string) => verifyPassword(stored, password, pepper),
    verifyDummy: (password: string) => verifyDummyPassword(password, pepper),
    validate: (password: unknown, path = '/password') => validatePasswordLength(password, settings.passwordMinLength, settings.passwordMaxLength, path),
    needsRehash,
  });
  return Object.freeze({
    settings,
    store,
    passwords,
    revocations,
    tokens,
    sessions,
    confirmTokens,
    otp,
    start: async () => {
      await sessions.loadRevocations();
    },
  });
}
