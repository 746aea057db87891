import { hash } from '@node-rs/argon2';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../core/errors.js';
import { thrownApiError } from '../testing/api-errors.js';
import { hashPassword, needsRehash, passwordWithinBounds, validatePasswordLength, verifyDummyPassword, verifyPassword } from './passwords.js';

const PEPPER = 'p'.repeat(40);
const OTHER_PEPPER = 'q'.repeat(40);

describe('hashPassword / verifyPassword', () => {
  it('hashes with Argon2id at m=19456, t=2, p=1 and verifies', async () => {
    const stored = await hashPassword('correct horse battery', PEPPER);
    expect(stored).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(stored).not.toContain('correct horse battery');
    expect(await verifyPassword(stored, 'correct horse battery', PEPPER)).toBe(true);
    expect(await verifyPassword(stored, 'correct horse batterY', PEPPER)).toBe(false);
    // Salted: the same password hashes differently each time.
    expect(await hashPassword('correct horse battery', PEPPER)).not.toBe(stored);
  });

  it('depends on the pepper: the right password under another PASSWORD_SECRET fails', async () => {
    const stored = await hashPassword('correct horse battery', PEPPER);
    expect(await verifyPassword(stored, 'correct horse battery', OTHER_PEPPER)).toBe(false);
    // And a hash made without any pepper does not verify with one.
    const unpeppered = await hash('correct horse battery', { algorithm: 2 as never });
    expect(await verifyPassword(unpeppered, 'correct horse battery', PEPPER)).toBe(false);
  });

  it('answers false, never throws, for malformed or foreign stored hashes', async () => {
    const bad: unknown[] = [
      '',
      'garbage',
      null,
      undefined,
      42,
      '$argon2id$v=19$m=19456,t=2,p=1$broken',
      '$argon2i$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g',
      '$2b$12$abcdefghijklmnopqrstuuMHDp0m1ZQ4Ajl1Xy7KZ0uvzP3T1eV5u',
      // Parameters far beyond the policy (4 GiB): refused without running Argon2.
      '$argon2id$v=19$m=4194304,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g',
      '$argon2id$' + 'x'.repeat(10_000),
    ];
    for (const stored of bad) expect(await verifyPassword(stored, 'whatever-password', PEPPER)).toBe(false);
  });

  it('normalizes to NFC, so composed and decomposed accents match', async () => {
    const stored = await hashPassword('caf\u00e9-password', PEPPER);
    expect(await verifyPassword(stored, 'cafe\u0301-password', PEPPER)).toBe(true);
  });

  it('the dummy verification always answers false', async () => {
    expect(await verifyDummyPassword('anything-at-all', PEPPER)).toBe(false);
    expect(await verifyDummyPassword('', PEPPER)).toBe(false);
  });

  it('needsRehash is false for current hashes and true for weaker or foreign ones', async () => {
    expect(needsRehash(await hashPassword('some-password', PEPPER))).toBe(false);
    const weak = await hash('some-password', { algorithm: 2 as never, memoryCost: 8192, timeCost: 1, secret: Buffer.from(PEPPER) });
    expect(needsRehash(weak)).toBe(true);
    expect(needsRehash('garbage')).toBe(true);
  });
});

describe('validatePasswordLength', () => {
  it('accepts 8 to 1024 characters by default', () => {
    expect(validatePasswordLength('12345678')).toBe('12345678');
    expect(validatePasswordLength('x'.repeat(1024))).toHaveLength(1024);
  });

  it('answers 400 BAD_REQUEST with details at /password outside the bounds', () => {
    for (const pw of ['1234567', '', 'x'.repeat(1025)]) {
      const err = thrownApiError(() => validatePasswordLength(pw));
      expect(err.code).toBe('BAD_REQUEST');
      expect(err.status).toBe(400);
      expect(err.details).toEqual([{ path: '/password', message: 'must be between 8 and 1024 characters' }]);
    }
    expect(thrownApiError(() => validatePasswordLength('short', 8, 1024, '/newPassword')).details?.[0]?.path).toBe('/newPassword');
  });

  it('counts characters, not UTF-16 units', () => {
    // 8 emoji are 16 UTF-16 units but 8 characters; 1024 of them fit, 1025 do not.
    expect(() => validatePasswordLength('😀'.repeat(8))).not.toThrow();
    expect(() => validatePasswordLength('😀'.repeat(4))).toThrow(ApiError);
    expect(() => validatePasswordLength('😀'.repeat(1024))).not.toThrow();
    expect(() => validatePasswordLength('😀'.repeat(1025))).toThrow(ApiError);
  });

  it('refuses a hostile megabyte password and non-strings before any hashing', () => {
    expect(() => validatePasswordLength('x'.repeat(2 * 1024 * 1024))).toThrow(ApiError);
    for (const v of [null, undefined, 12345678, ['12345678'], { length: 10 }]) {
      expect(thrownApiError(() => validatePasswordLength(v)).details).toEqual([{ path: '/password', message: 'must be a string' }]);
    }
  });

  it('honours project bounds', () => {
    expect(() => validatePasswordLength('123456789012', 12, 16)).not.toThrow();
    expect(() => validatePasswordLength('12345678901', 12, 16)).toThrow(/between 12 and 16/);
    expect(passwordWithinBounds('x'.repeat(1025))).toBe(false);
    expect(passwordWithinBounds('x')).toBe(true);
    expect(passwordWithinBounds(5)).toBe(false);
  });
});
