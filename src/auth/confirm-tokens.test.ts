import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { outcome } from '../testing/api-errors.js';
import { ConfirmTokens } from './confirm-tokens.js';
import { resolveAuthSettings } from './settings.js';
import { openAuthTestDb, type AuthTestDb } from './test-fixtures.js';

const HOUR = 3_600_000;
const user = { table: 'users', userId: 'us_1', email: 'ann@example.com' };

let db: AuthTestDb;
let confirm: ConfirmTokens;

function confirmTokensWith(settings = resolveAuthSettings()): ConfirmTokens {
  return new ConfirmTokens({
    store: db.store,
    write: db.write,
    verifyTokenTtlSeconds: settings.verifyTokenTtlSeconds,
    resetTokenTtlSeconds: settings.resetTokenTtlSeconds,
    now: db.clock.now,
  });
}

beforeEach(async () => {
  db = await openAuthTestDb();
  confirm = confirmTokensWith();
});
afterEach(() => db.close());

const INVALID = '400 INVALID_CONFIRMATION_TOKEN';

describe('ConfirmTokens', () => {
  it('issues a random token stored only hashed, and consumes it once', async () => {
    const { token, expiresAt } = await confirm.issue('verify', user);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(expiresAt).toBe(db.clock.t + 24 * HOUR);
    expect(JSON.stringify(await db.driver.all('SELECT * FROM "_auth_tokens"'))).not.toContain(token);
    expect(await confirm.consume('verify', token)).toEqual({ table: 'users', userId: 'us_1', email: 'ann@example.com' });
    expect(await outcome(confirm.consume('verify', token))).toBe(INVALID);
  });

  it('expires after 24 h (verify) and 1 h (reset) by default', async () => {
    const v = await confirm.issue('verify', user);
    const r = await confirm.issue('reset', user);
    db.clock.advance(HOUR - 1);
    const r2 = await confirm.issue('reset', { ...user, userId: 'us_2' });
    db.clock.advance(1);
    expect(await outcome(confirm.consume('reset', r.token))).toBe(INVALID);
    expect((await confirm.consume('reset', r2.token)).userId).toBe('us_2');
    db.clock.advance(23 * HOUR - 1);
    expect((await confirm.consume('verify', v.token)).userId).toBe('us_1');
    const v2 = await confirm.issue('verify', user);
    db.clock.advance(24 * HOUR);
    expect(await outcome(confirm.consume('verify', v2.token))).toBe(INVALID);
  });

  it('takes its lifetimes from the project settings', async () => {
    confirm = confirmTokensWith(resolveAuthSettings({ resetTokenTtl: '10m', verifyTokenTtl: 120 }));
    const r = await confirm.issue('reset', user);
    const v = await confirm.issue('verify', user);
    expect(r.expiresAt - db.clock.t).toBe(10 * 60_000);
    expect(v.expiresAt - db.clock.t).toBe(120_000);
  });

  it('refuses unknown, malformed and wrong-kind tokens alike', async () => {
    const v = await confirm.issue('verify', user);
    for (const bad of [undefined, null, 7, '', 'nope', 'A'.repeat(43), 'x'.repeat(1_000_000)]) {
      expect(await outcome(confirm.consume('verify', bad))).toBe(INVALID);
    }
    expect(await outcome(confirm.consume('reset', v.token))).toBe(INVALID);
    // The wrong-kind attempt did not use it up.
    expect((await confirm.consume('verify', v.token)).userId).toBe('us_1');
  });

  it('using one reset link retires the user’s other outstanding reset links', async () => {
    const first = await confirm.issue('reset', user);
    const second = await confirm.issue('reset', user);
    const otherUser = await confirm.issue('reset', { ...user, userId: 'us_2' });
    const verify = await confirm.issue('verify', user);
    await confirm.consume('reset', second.token);
    expect(await outcome(confirm.consume('reset', first.token))).toBe(INVALID);
    expect((await confirm.consume('reset', otherUser.token)).userId).toBe('us_2');
    expect((await confirm.consume('verify', verify.token)).userId).toBe('us_1');
  });

  it('two concurrent confirmations of one token: exactly one succeeds', async () => {
    const { token } = await confirm.issue('reset', user);
    const results = await Promise.allSettled([confirm.consume('reset', token), confirm.consume('reset', token), confirm.consume('reset', token)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  });

  it('consumed inside a transaction that fails, the token stays usable', async () => {
    const { token } = await confirm.issue('reset', user);
    await expect(
      db.write(async (tx) => {
        await confirm.consume('reset', token, tx);
        throw new Error('storing the new password failed');
      }),
    ).rejects.toThrow('storing the new password failed');
    expect((await confirm.consume('reset', token)).userId).toBe('us_1');
  });

  it('purgeExpired removes expired confirmation tokens', async () => {
    const { token } = await confirm.issue('reset', user);
    await confirm.issue('verify', user);
    db.clock.advance(2 * HOUR);
    const n = await db.write((tx) => db.store.purgeExpired(tx, db.clock.t, db.clock.t - HOUR));
    expect(n).toBe(1);
    const left = await db.driver.all('SELECT "kind" FROM "_auth_tokens"');
    expect(left).toEqual([{ kind: 'verify' }]);
    expect(await outcome(confirm.consume('reset', token))).toBe(INVALID);
  });
});

describe('magic-link and change-email tokens, and peek (docs/reference/auth.md)', () => {
  it('magic links live 15 minutes, email changes 1 hour', async () => {
    const magic = await confirm.issue('magic', user);
    const change = await confirm.issue('changeEmail', { ...user, email: 'new@example.com' });
    expect(magic.expiresAt - db.clock.t).toBe(15 * 60_000);
    expect(change.expiresAt - db.clock.t).toBe(HOUR);
    db.clock.advance(15 * 60_000);
    expect(await outcome(confirm.consume('magic', magic.token))).toBe(INVALID);
    expect((await confirm.consume('changeEmail', change.token)).email).toBe('new@example.com');
  });

  it('kinds do not mix: a magic token does not confirm a reset', async () => {
    const magic = await confirm.issue('magic', user);
    expect(await outcome(confirm.consume('reset', magic.token))).toBe(INVALID);
    expect(await outcome(confirm.peek('reset', magic.token, db.driver))).toBe(INVALID);
    expect((await confirm.consume('magic', magic.token)).userId).toBe('us_1');
  });

  it('peek answers a live token without using it, and refuses unknown, used and expired ones', async () => {
    const reset = await confirm.issue('reset', user);
    expect((await confirm.peek('reset', reset.token, db.driver)).email).toBe(user.email);
    expect((await confirm.peek('reset', reset.token, db.driver)).userId).toBe('us_1');
    expect(await outcome(confirm.peek('reset', 'x'.repeat(43), db.driver))).toBe(INVALID);
    expect(await outcome(confirm.peek('reset', 'not a token', db.driver))).toBe(INVALID);
    await confirm.consume('reset', reset.token);
    expect(await outcome(confirm.peek('reset', reset.token, db.driver))).toBe(INVALID);
    const later = await confirm.issue('reset', user);
    db.clock.advance(HOUR);
    expect(await outcome(confirm.peek('reset', later.token, db.driver))).toBe(INVALID);
  });
});
