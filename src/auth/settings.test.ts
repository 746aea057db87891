import { describe, expect, it } from 'vitest';
import { AUTH_DEFAULTS, parseTtlSeconds, resolveAuthSettings } from './settings.js';

describe('auth settings', () => {
  it('defaults to docs/reference/auth.md: 1 h access, 24 h verify, 1 h reset, 8–1024 character passwords', () => {
    expect(resolveAuthSettings()).toEqual(AUTH_DEFAULTS);
    expect(AUTH_DEFAULTS).toMatchObject({
      accessTokenTtlSeconds: 3600,
      verifyTokenTtlSeconds: 86_400,
      resetTokenTtlSeconds: 3600,
      passwordMinLength: 8,
      passwordMaxLength: 1024,
    });
  });

  it('reads seconds or unit strings', () => {
    expect(parseTtlSeconds(90, 'x')).toBe(90);
    expect(parseTtlSeconds('45s', 'x')).toBe(45);
    expect(parseTtlSeconds('15m', 'x')).toBe(900);
    expect(parseTtlSeconds('2h', 'x')).toBe(7200);
    expect(parseTtlSeconds('7d', 'x')).toBe(604_800);
    expect(resolveAuthSettings({ accessTokenTtl: '30m', refreshTokenTtl: '14d', passwordMaxLength: 64 })).toMatchObject({
      accessTokenTtlSeconds: 1800,
      refreshTokenTtlSeconds: 1_209_600,
      passwordMaxLength: 64,
    });
  });

  it('refuses typos with a message naming the setting', () => {
    for (const bad of ['1 hour', '1.5h', '-1h', 'h', '', 0, -5, 1.5, Number.NaN]) {
      expect(() => resolveAuthSettings({ accessTokenTtl: bad as never })).toThrow(/accessTokenTtl/);
    }
    expect(() => resolveAuthSettings({ resetTokenTtl: null as never })).toThrow(/resetTokenTtl/);
    expect(() => resolveAuthSettings({ passwordMinLength: 0 })).toThrow(/passwordMinLength/);
    expect(() => resolveAuthSettings({ passwordMinLength: 20, passwordMaxLength: 10 })).toThrow(/passwordMinLength/);
    expect(() => resolveAuthSettings({ passwordMaxLength: 10_000_000 })).toThrow(/passwordMaxLength/);
  });
});
