import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OTP_MAX_ATTEMPTS, OtpCodes } from './otp.js';
import { openAuthTestDb, type AuthTestDb } from './test-fixtures.js';

let db: AuthTestDb;
let otp: OtpCodes;

beforeEach(async () => {
  db = await openAuthTestDb();
  otp = new OtpCodes({ dialect: db.driver.dialect, write: db.write, secret: 'p'.repeat(32), now: db.clock.now });
});
afterEach(() => db.close());

const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

describe('OTP codes', () => {
  it('are 6 digits, stored only as an HMAC, and work once', async () => {
    const { code } = await otp.issue('users', 'a@x.io');
    expect(code).toMatch(/^\d{6}$/);
    const stored = await db.driver.all('SELECT code_hash FROM _otp_codes');
    expect(stored).toHaveLength(1);
    expect(String(stored[0]!.code_hash)).not.toContain(code);
    expect(await otp.verify('users', 'a@x.io', code)).toBe(true);
    expect(await otp.verify('users', 'a@x.io', code)).toBe(false);
  });

  it('are bound to the table and the address', async () => {
    const { code } = await otp.issue('users', 'a@x.io');
    expect(await otp.verify('users', 'b@x.io', code)).toBe(false);
    expect(await otp.verify('admins', 'a@x.io', code)).toBe(false);
    expect(await otp.verify('users', 'a@x.io', code)).toBe(true);
  });

  it('a new send replaces the old code', async () => {
    const first = await otp.issue('users', 'a@x.io');
    let second = await otp.issue('users', 'a@x.io');
    while (second.code === first.code) second = await otp.issue('users', 'a@x.io');
    expect(await otp.verify('users', 'a@x.io', first.code)).toBe(false);
    expect(await otp.verify('users', 'a@x.io', second.code)).toBe(true);
  });

  it('expire after 10 minutes', async () => {
    const { code } = await otp.issue('users', 'a@x.io');
    db.clock.advance(600_000);
    expect(await otp.verify('users', 'a@x.io', code)).toBe(false);
  });

  it('die after 5 wrong tries even if the right one follows; the 5th try may still be right', async () => {
    const { code } = await otp.issue('users', 'a@x.io');
    for (let i = 0; i < OTP_MAX_ATTEMPTS - 1; i++) expect(await otp.verify('users', 'a@x.io', wrong(code))).toBe(false);
    expect(await otp.verify('users', 'a@x.io', code)).toBe(true);
    const again = await otp.issue('users', 'a@x.io');
    for (let i = 0; i < OTP_MAX_ATTEMPTS; i++) expect(await otp.verify('users', 'a@x.io', i % 2 ? 'abc' : wrong(again.code))).toBe(false);
    expect(await otp.verify('users', 'a@x.io', again.code)).toBe(false);
  });

  it('parallel guesses cannot exceed the budget', async () => {
    const { code } = await otp.issue('users', 'a@x.io');
    await Promise.all(Array.from({ length: 20 }, () => otp.verify('users', 'a@x.io', wrong(code))));
    expect(await otp.verify('users', 'a@x.io', code)).toBe(false);
    const [row] = await db.driver.all('SELECT attempts FROM _otp_codes');
    expect(row!.attempts).toBe(OTP_MAX_ATTEMPTS);
  });

  it('purges expired codes', async () => {
    await otp.issue('users', 'a@x.io');
    db.clock.advance(601_000);
    expect(await otp.purgeExpired()).toBe(1);
  });
});
