import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { outcome } from '../testing/api-errors.js';
import { AccessTokens } from './jwt.js';
import { hashOpaqueToken } from './opaque.js';
import { RevocationList } from './revocation.js';
import { SessionManager } from './sessions.js';
import { openAuthTestDb, revocationsFor, type AuthTestDb } from './test-fixtures.js';

const DAY = 86_400_000;
const owner = { table: 'users', userId: 'us_1' };

let db: AuthTestDb;
let revocations: RevocationList;
let sessions: SessionManager;
let tokens: AccessTokens;

function managerFor(list: RevocationList): SessionManager {
  return new SessionManager({ store: db.store, reader: db.driver, write: db.write, revocations: list, refreshTokenTtlSeconds: 30 * 86_400, now: db.clock.now });
}

beforeEach(async () => {
  db = await openAuthTestDb();
  revocations = revocationsFor(db.clock);
  sessions = managerFor(revocations);
  tokens = new AccessTokens({ secret: 'j'.repeat(40), ttlSeconds: 3600, revocations, now: db.clock.now });
});
afterEach(() => db.close());

const accessFor = (sessionId: string) => tokens.sign({ user: { id: owner.userId }, table: owner.table, isAdmin: false, sessionId }).then((t) => t.token);

describe('SessionManager', () => {
  it('starts a session with an opaque refresh token stored only as its hash', async () => {
    const s = await sessions.start(owner);
    expect(s.refreshToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(s.sessionId).toMatch(/^ss_[0-9a-z]+$/);
    expect(s.refreshExpiresAt).toBe(db.clock.t + 30 * DAY);
    const rows = await db.driver.all('SELECT * FROM "_auth_tokens"');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ kind: 'refresh', token_hash: hashOpaqueToken(s.refreshToken), session_id: s.sessionId, used_at: null });
    expect(JSON.stringify(rows)).not.toContain(s.refreshToken);
    expect(await sessions.find(s.sessionId)).toMatchObject({ id: s.sessionId, ...owner, revokedAt: null });
  });

  it('rotates on every refresh and slides the expiry', async () => {
    const s = await sessions.start(owner);
    db.clock.advance(DAY);
    const r1 = await sessions.refresh(s.refreshToken);
    expect(r1).toMatchObject({ sessionId: s.sessionId, ...owner });
    expect(r1.refreshToken).not.toBe(s.refreshToken);
    expect(r1.refreshExpiresAt).toBe(db.clock.t + 30 * DAY);
    expect((await sessions.find(s.sessionId))?.expiresAt).toBe(r1.refreshExpiresAt);
    const r2 = await sessions.refresh(r1.refreshToken);
    expect(r2.sessionId).toBe(s.sessionId);
    expect(new Set([s.refreshToken, r1.refreshToken, r2.refreshToken]).size).toBe(3);
  });

  it('reusing a rotated token revokes the whole session and its access tokens', async () => {
    const s = await sessions.start(owner);
    const access = await accessFor(s.sessionId);
    await tokens.verifyToken(access); // cached
    const r1 = await sessions.refresh(s.refreshToken);
    expect(await outcome(sessions.refresh(s.refreshToken))).toBe('401 INVALID_TOKEN');
    // The revocation was committed although the request failed, and reached the access tokens.
    expect(await sessions.find(s.sessionId)).toMatchObject({ revokeReason: 'reuse', revokedAt: db.clock.t });
    expect(await outcome(Promise.resolve().then(() => tokens.verifyToken(access)))).toBe('401 INVALID_TOKEN');
    // The legitimate successor dies with the session.
    expect(await outcome(sessions.refresh(r1.refreshToken))).toBe('401 INVALID_TOKEN');
  });

  it('only one of two concurrent refreshes with the same token wins; the race counts as reuse', async () => {
    const s = await sessions.start(owner);
    const results = await Promise.allSettled([sessions.refresh(s.refreshToken), sessions.refresh(s.refreshToken)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect((await sessions.find(s.sessionId))?.revokeReason).toBe('reuse');
  });

  it('refuses unknown, malformed and expired refresh tokens without revoking anything', async () => {
    const s = await sessions.start(owner);
    for (const bad of [undefined, null, 42, '', 'short', 'x'.repeat(43), 'y'.repeat(100_000)]) {
      expect(await outcome(sessions.refresh(bad))).toBe('401 INVALID_TOKEN');
    }
    db.clock.advance(30 * DAY);
    expect(await outcome(sessions.refresh(s.refreshToken))).toBe('401 INVALID_TOKEN');
    expect((await sessions.find(s.sessionId))?.revokedAt).toBeNull();
  });

  it('logout revokes the session, its refresh token and its access tokens, and nothing else', async () => {
    const a = await sessions.start(owner);
    const b = await sessions.start(owner);
    const accessA = await accessFor(a.sessionId);
    const accessB = await accessFor(b.sessionId);
    expect(await sessions.logout(a.sessionId)).toBe(true);
    expect(await sessions.logout(a.sessionId)).toBe(false);
    expect(await outcome(Promise.resolve().then(() => tokens.verifyToken(accessA)))).toBe('401 INVALID_TOKEN');
    expect(await outcome(sessions.refresh(a.refreshToken))).toBe('401 INVALID_TOKEN');
    expect((await tokens.verifyToken(accessB)).userId).toBe('us_1');
    expect((await sessions.refresh(b.refreshToken)).sessionId).toBe(b.sessionId);
  });

  it('revokeAllForUser ends every session of that user only (confirmed reset, docs/reference/auth.md)', async () => {
    const a = await sessions.start(owner);
    const b = await sessions.start(owner);
    const other = await sessions.start({ table: 'users', userId: 'us_2' });
    const sameIdOtherTable = await sessions.start({ table: 'admins', userId: 'us_1' });
    const accessA = await accessFor(a.sessionId);
    const ids = await sessions.revokeAllForUser(owner, 'reset');
    expect(ids.sort()).toEqual([a.sessionId, b.sessionId].sort());
    expect(await outcome(Promise.resolve().then(() => tokens.verifyToken(accessA)))).toBe('401 INVALID_TOKEN');
    expect(await outcome(sessions.refresh(b.refreshToken))).toBe('401 INVALID_TOKEN');
    expect((await sessions.find(a.sessionId))?.revokeReason).toBe('reset');
    expect((await sessions.refresh(other.refreshToken)).userId).toBe('us_2');
    expect((await sessions.refresh(sameIdOtherTable.refreshToken)).table).toBe('admins');
    expect(await sessions.revokeAllForUser(owner, 'reset')).toEqual([]);
  });

  it('after a restart, revocations are loaded from storage', async () => {
    const s = await sessions.start(owner);
    const access = await accessFor(s.sessionId);
    await sessions.logout(s.sessionId);
    // A new process: empty list and cache, same database.
    const list = revocationsFor(db.clock);
    const restarted = new AccessTokens({ secret: 'j'.repeat(40), ttlSeconds: 3600, revocations: list, now: db.clock.now });
    expect((await restarted.verifyToken(access)).sub).toBe('us_1'); // before loading: not known
    restarted.clearCache();
    expect(await managerFor(list).loadRevocations()).toBe(1);
    expect(await outcome(Promise.resolve().then(() => restarted.verifyToken(access)))).toBe('401 INVALID_TOKEN');
  });

  it('revokes inside a caller transaction, which rolls back with it', async () => {
    const s = await sessions.start(owner);
    await expect(
      db.write(async (tx) => {
        await sessions.revokeAllForUser(owner, 'reset', tx);
        throw new Error('the password update failed');
      }),
    ).rejects.toThrow('the password update failed');
    expect((await sessions.find(s.sessionId))?.revokedAt).toBeNull();
    // The in-memory list errs on the safe side: the session's access tokens stay refused.
    expect(revocations.isRevoked(s.sessionId)).toBe(true);
  });

  it('purgeExpired drops expired and long-revoked sessions with their tokens, keeping recent revocations', async () => {
    const expired = await sessions.start(owner);
    const revokedLongAgo = await sessions.start(owner);
    await sessions.logout(revokedLongAgo.sessionId);
    db.clock.advance(30 * DAY + 2 * 3_600_000);
    const live = await sessions.start(owner);
    const revokedNow = await sessions.start(owner);
    await sessions.logout(revokedNow.sessionId);
    expect(await sessions.purgeExpired()).toBe(4); // 2 sessions + their 2 refresh tokens
    expect(await sessions.find(expired.sessionId)).toBeNull();
    expect(await sessions.find(revokedLongAgo.sessionId)).toBeNull();
    expect(await sessions.find(revokedNow.sessionId)).not.toBeNull();
    expect((await sessions.refresh(live.refreshToken)).sessionId).toBe(live.sessionId);
  });
});
