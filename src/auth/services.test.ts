import { existsSync, readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../core/errors.js';
import { createAuthServices, sessionIdOf, type AuthServices } from './index.js';
import { openAuthTestDb, type AuthTestDb } from './test-fixtures.js';

const USERS_DDL = `CREATE TABLE "users" ("id" TEXT NOT NULL PRIMARY KEY, "email" TEXT NOT NULL UNIQUE, "password" TEXT NOT NULL, "is_verified" INTEGER NOT NULL DEFAULT 0);`;
const SECRETS = { jwtSecret: 'J'.repeat(20) + 'jwt-secret-value-xyz', passwordSecret: 'P'.repeat(20) + 'pepper-value-xyz' };
const PASSWORD = 'plaintext-Pa55word-marker';
const NEW_PASSWORD = 'another-plaintext-N3w-marker';

let db: AuthTestDb;
let auth: AuthServices;

beforeEach(async () => {
  db = await openAuthTestDb(USERS_DDL);
  auth = createAuthServices({
    secrets: SECRETS,
    settings: { accessTokenTtl: '15m', passwordMinLength: 10 },
    dialect: db.driver.dialect,
    reader: db.driver,
    write: db.write,
    now: db.clock.now,
  });
  await auth.start();
});
afterEach(() => db.close());

/** What the routes will do, reduced to the auth calls. */
async function signUp(email: string, password: string) {
  auth.passwords.validate(password);
  const hash = await auth.passwords.hash(password);
  const id = `us_${email.split('@')[0]}`;
  await db.write((tx) => tx.run('INSERT INTO "users" ("id", "email", "password") VALUES (?, ?, ?)', [id, email, hash]));
  const session = await auth.sessions.start({ table: 'users', userId: id });
  const access = await auth.tokens.sign({ user: { id }, table: 'users', isAdmin: false, sessionId: session.sessionId, customClaims: { plan: 'free' } });
  return { id, session, access };
}

async function signIn(email: string, password: string): Promise<boolean> {
  const row = await db.driver.get('SELECT "password" FROM "users" WHERE "email" = ?', [email]);
  return row === undefined ? auth.passwords.verifyDummy(password) : auth.passwords.verify(row.password, password);
}

describe('createAuthServices', () => {
  it('applies the project settings', async () => {
    expect(auth.settings.accessTokenTtlSeconds).toBe(900);
    const { access } = await signUp('ann@example.com', PASSWORD);
    expect(access.expiresIn).toBe(900);
    expect(() => auth.passwords.validate('123456789')).toThrow(ApiError);
    expect(() => auth.passwords.validate('short', '/newPassword')).toThrow(expect.objectContaining({ details: [expect.objectContaining({ path: '/newPassword' })] }));
  });

  it('signs in with the right password only; an unknown email answers false the same way', async () => {
    await signUp('ann@example.com', PASSWORD);
    expect(await signIn('ann@example.com', PASSWORD)).toBe(true);
    expect(await signIn('ann@example.com', NEW_PASSWORD)).toBe(false);
    expect(await signIn('nobody@example.com', PASSWORD)).toBe(false);
  });

  it('a confirmed reset stores the new hash and ends every session in one commit', async () => {
    const { id, session, access } = await signUp('ann@example.com', PASSWORD);
    const jwt = await auth.tokens.verify(`Bearer ${access.token}`);
    expect(jwt?.plan).toBe('free');
    const { token } = await auth.confirmTokens.issue('reset', { table: 'users', userId: id, email: 'ann@example.com' });
    const hash = await auth.passwords.hash(NEW_PASSWORD); // hashed before the write: the writer is never held by Argon2
    await db.write(async (tx) => {
      const who = await auth.confirmTokens.consume('reset', token, tx);
      await tx.run('UPDATE "users" SET "password" = ? WHERE "id" = ?', [hash, who.userId]);
      await auth.sessions.revokeAllForUser(who, 'reset', tx);
    });
    expect(await signIn('ann@example.com', NEW_PASSWORD)).toBe(true);
    expect(await signIn('ann@example.com', PASSWORD)).toBe(false);
    await expect(Promise.resolve().then(() => auth.tokens.verify(`Bearer ${access.token}`))).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    await expect(auth.sessions.refresh(session.refreshToken)).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    // Signing in again right away gives a working token (revocation is per session, not per time).
    const again = await auth.sessions.start({ table: 'users', userId: id });
    const fresh = await auth.tokens.sign({ user: { id }, table: 'users', isAdmin: false, sessionId: again.sessionId });
    expect(sessionIdOf(await auth.tokens.verifyToken(fresh.token))).toBe(again.sessionId);
  });

  it('no plaintext password, token or secret ever reaches the database file', async () => {
    const { id, session } = await signUp('ann@example.com', PASSWORD);
    const refreshed = await auth.sessions.refresh(session.refreshToken);
    const verify = await auth.confirmTokens.issue('verify', { table: 'users', userId: id, email: 'ann@example.com' });
    const reset = await auth.confirmTokens.issue('reset', { table: 'users', userId: id, email: 'ann@example.com' });
    await db.write((tx) => auth.confirmTokens.consume('verify', verify.token, tx));
    // Close (checkpointing the WAL into the main file), then read every byte left on disk.
    await db.writer.whenIdle();
    await db.driver.close();
    const bytes = [db.file, `${db.file}-wal`, `${db.file}-shm`].filter(existsSync).map((f) => readFileSync(f));
    const all = Buffer.concat(bytes);
    expect(all.includes(Buffer.from('us_ann'))).toBe(true); // sanity: the file does hold the data
    for (const secret of [PASSWORD, session.refreshToken, refreshed.refreshToken, verify.token, reset.token, SECRETS.passwordSecret, SECRETS.jwtSecret]) {
      expect(all.includes(Buffer.from(secret)), secret.slice(0, 12)).toBe(false);
    }
  });
});
