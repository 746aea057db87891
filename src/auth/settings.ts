/**
 * The project's `auth` settings (define/project.ts AuthSettings) resolved once at start, so a
 * typo such as `accessTokenTtl: "1 hour"` fails with a message naming the setting instead of
 * silently issuing tokens with a surprising lifetime.
 *
 * Defaults: docs/reference/auth.md — access tokens 1 hour, verification tokens 24 h, reset tokens 1 h,
 * passwords 8 to 1024 characters. Refresh tokens (our choice, docs/decisions.md) live 30 days, sliding:
 * each rotation gives the new token a fresh lifetime, like better-auth's session refresh.
 */
import type { AuthSettings } from '../define/project.js';

export interface ResolvedAuthSettings {
  readonly accessTokenTtlSeconds: number;
  readonly refreshTokenTtlSeconds: number;
  readonly verifyTokenTtlSeconds: number;
  readonly resetTokenTtlSeconds: number;
  readonly passwordMinLength: number;
  readonly passwordMaxLength: number;
}

export const AUTH_DEFAULTS: ResolvedAuthSettings = Object.freeze({
  accessTokenTtlSeconds: 3_600,
  refreshTokenTtlSeconds: 30 * 86_400,
  verifyTokenTtlSeconds: 86_400,
  resetTokenTtlSeconds: 3_600,
  passwordMinLength: 8,
  passwordMaxLength: 1_024,
});

const UNIT_SECONDS = { s: 1, m: 60, h: 3_600, d: 86_400 } as const;
const TTL_RE = /^(\d{1,9})(s|m|h|d)$/;
/** Ten years: anything longer is a typo, and keeps expiry arithmetic far from unsafe integers. */
const MAX_TTL_SECONDS = 10 * 365 * 86_400;
/** Upper bound for `passwordMaxLength`: the hash input stays small whatever the project says. */
const MAX_PASSWORD_LENGTH = 65_536;

/** Seconds of a lifetime given as whole seconds or a string like "30s", "15m", "1h", "7d". */
export function parseTtlSeconds(value: unknown, where: string): number {
  let seconds: number;
  if (typeof value === 'number') seconds = value;
  else if (typeof value === 'string') {
    const m = TTL_RE.exec(value);
    if (m === null) throw new Error(`auth setting ${where}: ${JSON.stringify(value)} is not a duration; use seconds or a string like "30s", "15m", "1h", "7d"`);
    seconds = Number(m[1]) * UNIT_SECONDS[m[2] as keyof typeof UNIT_SECONDS];
  } else throw new Error(`auth setting ${where}: expected seconds or a string like "1h", got ${value === null ? 'null' : typeof value}`);
  if (!Number.isSafeInteger(seconds) || seconds <= 0 || seconds > MAX_TTL_SECONDS) {
    throw new Error(`auth setting ${where}: must be a whole number of seconds between 1 and ${MAX_TTL_SECONDS}`);
  }
  return seconds;
}

function length(value: unknown, where: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > MAX_PASSWORD_LENGTH) {
    throw new Error(`auth setting ${where}: must be a whole number between 1 and ${MAX_PASSWORD_LENGTH}`);
  }
  return value;
}

export function resolveAuthSettings(settings: AuthSettings = {}): ResolvedAuthSettings {
  const ttl = (value: number | string | undefined, where: string, fallback: number) => (value === undefined ? fallback : parseTtlSeconds(value, where));
  const resolved: ResolvedAuthSettings = {
    accessTokenTtlSeconds: ttl(settings.accessTokenTtl, 'accessTokenTtl', AUTH_DEFAULTS.accessTokenTtlSeconds),
    refreshTokenTtlSeconds: ttl(settings.refreshTokenTtl, 'refreshTokenTtl', AUTH_DEFAULTS.refreshTokenTtlSeconds),
    verifyTokenTtlSeconds: ttl(settings.verifyTokenTtl, 'verifyTokenTtl', AUTH_DEFAULTS.verifyTokenTtlSeconds),
    resetTokenTtlSeconds: ttl(settings.resetTokenTtl, 'resetTokenTtl', AUTH_DEFAULTS.resetTokenTtlSeconds),
    passwordMinLength: length(settings.passwordMinLength, 'passwordMinLength', AUTH_DEFAULTS.passwordMinLength),
    passwordMaxLength: length(settings.passwordMaxLength, 'passwordMaxLength', AUTH_DEFAULTS.passwordMaxLength),
  };
  if (resolved.passwordMinLength > resolved.passwordMaxLength) {
    throw new Error('auth setting passwordMinLength: must not exceed passwordMaxLength');
  }
  return Object.freeze(resolved);
}
