import { decodeJwt, decodeProtectedHeader, SignJWT, UnsecuredJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { rejectedApiError } from '../testing/api-errors.js';
import { AccessTokens, MAX_TOKEN_LENGTH, parseBearer, sessionIdOf } from './jwt.js';
import { Lru } from './lru.js';
import { RevocationList } from './revocation.js';
import { Clock } from './test-fixtures.js';

const SECRET = 's'.repeat(40);
const key = new TextEncoder().encode(SECRET);

function setup(options: { cacheSize?: number; ttl?: number } = {}) {
  const clock = new Clock();
  const revocations = new RevocationList(options.ttl ?? 3600, clock.now);
  const tokens = new AccessTokens({ secret: SECRET, ttlSeconds: options.ttl ?? 3600, revocations, cacheSize: options.cacheSize, now: clock.now });
  const sign = (extra: Partial<Parameters<AccessTokens['sign']>[0]> = {}) => tokens.sign({ user: { id: 'us_1' }, table: 'users', isAdmin: false, sessionId: 'ss_abc', ...extra });
  return { clock, revocations, tokens, sign };
}

async function expectInvalid(p: unknown): Promise<void> {
  const err = await rejectedApiError(p);
  expect(err.code).toBe('INVALID_TOKEN');
  expect(err.status).toBe(401);
}

/** A token with the right secret and whatever payload and header (claims shape tests). */
function forge(payload: Record<string, unknown>, alg = 'HS256'): Promise<string> {
  return new SignJWT(payload).setProtectedHeader({ alg }).sign(key);
}

describe('AccessTokens.sign', () => {
  it('sets exactly the docs/reference/auth.md claims, HS256, and expiresIn in seconds', async () => {
    const { sign, clock } = setup();
    const { token, expiresIn } = await sign({ isAdmin: true });
    expect(expiresIn).toBe(3600);
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'HS256', typ: 'JWT' });
    const c = decodeJwt(token);
    const iat = Math.floor(clock.t / 1000);
    expect(c).toEqual({
      sub: 'us_1',
      userId: 'us_1',
      table: 'users',
      admin: { isAdmin: true },
      iat,
      exp: iat + 3600,
      jti: expect.stringMatching(/^ss_abc\.[A-Za-z0-9_-]{16}$/),
    });
    expect(sessionIdOf(c as { jti: string })).toBe('ss_abc');
    // Every token gets its own jti.
    expect(decodeJwt((await sign()).token).jti).not.toBe(c.jti);
  });

  it('adds custom claims but never lets them override reserved ones', async () => {
    const { sign, tokens } = setup();
    const customClaims = JSON.parse(
      '{"plan":"pro","sub":"us_evil","userId":"us_evil","table":"admins","admin":{"isAdmin":true},"exp":99999999999,"iat":1,"jti":"ss_x.y","nbf":99999999999,"aud":"x","iss":"x","__proto__":{"polluted":true}}',
    );
    const { token } = await sign({ customClaims });
    const jwt = await tokens.verifyToken(token);
    expect(jwt.plan).toBe('pro');
    expect(jwt.sub).toBe('us_1');
    expect(jwt.userId).toBe('us_1');
    expect(jwt.table).toBe('users');
    expect(jwt.admin).toEqual({ isAdmin: false });
    expect(jwt.exp - jwt.iat).toBe(3600);
    expect(sessionIdOf(jwt)).toBe('ss_abc');
    expect(jwt).not.toHaveProperty('nbf');
    expect(jwt).not.toHaveProperty('aud');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses a lifetime beyond the configured one (it would outlive the revocation list)', async () => {
    const { sign } = setup();
    await expect(sign({ ttlSeconds: 3601 })).rejects.toThrow(/ttlSeconds/);
    expect((await sign({ ttlSeconds: 60 })).expiresIn).toBe(60);
    await expect(sign({ sessionId: 'a.b' })).rejects.toThrow(/sessionId/);
  });
});

describe('AccessTokens.verifyToken', () => {
  it('answers the decoded, frozen token', async () => {
    const { sign, tokens } = setup();
    const { token } = await sign({ customClaims: { plan: 'pro', nested: { a: 1 } } });
    const jwt = await tokens.verifyToken(token);
    expect(jwt).toMatchObject({ sub: 'us_1', userId: 'us_1', table: 'users', admin: { isAdmin: false }, plan: 'pro' });
    expect(Object.isFrozen(jwt)).toBe(true);
    expect(Object.isFrozen(jwt.admin)).toBe(true);
    expect(Object.isFrozen(jwt.nested)).toBe(true);
  });

  it('a repeated token is answered from the cache, synchronously and identically', async () => {
    const { sign, tokens } = setup();
    const { token } = await sign();
    const first = await tokens.verifyToken(token);
    const second = tokens.verifyToken(token);
    expect(second).not.toBeInstanceOf(Promise);
    expect(second).toBe(first);
  });

  it('refuses a tampered signature or payload', async () => {
    const { sign, tokens } = setup();
    const { token } = await sign();
    const [h, p, s] = token.split('.') as [string, string, string];
    const flipped = s.slice(0, -2) + (s.at(-2) === 'A' ? 'B' : 'A') + s.at(-1);
    await expectInvalid(tokens.verifyToken(`${h}.${p}.${flipped}`));
    const claims = { ...decodeJwt(token), admin: { isAdmin: true } };
    const evil = Buffer.from(JSON.stringify(claims)).toString('base64url');
    await expectInvalid(tokens.verifyToken(`${h}.${evil}.${s}`));
    // The genuine token still verifies afterwards.
    expect((await tokens.verifyToken(token)).sub).toBe('us_1');
  });

  it('refuses alg none, other algorithms and other secrets', async () => {
    const { sign, tokens } = setup();
    const claims = decodeJwt((await sign()).token);
    await expectInvalid(tokens.verifyToken(new UnsecuredJWT(claims).encode()));
    const noneHeader = Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url');
    const [, body, sig] = (await sign()).token.split('.');
    await expectInvalid(tokens.verifyToken(`${noneHeader}.${body}.`));
    await expectInvalid(tokens.verifyToken(`${noneHeader}.${body}.${sig}`));
    await expectInvalid(tokens.verifyToken(await forge(claims, 'HS512')));
    const other = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('o'.repeat(40)));
    await expectInvalid(tokens.verifyToken(other));
    // Same claims, right secret and algorithm: accepted (so the refusals above are about alg/secret).
    expect((await tokens.verifyToken(await forge(claims))).sub).toBe('us_1');
  });

  it('refuses malformed tokens and tokens missing or mistyping reserved claims', async () => {
    const { tokens, clock } = setup();
    const iat = Math.floor(clock.t / 1000);
    const good = { sub: 'us_1', userId: 'us_1', table: 'users', admin: { isAdmin: false }, iat, exp: iat + 60, jti: 'ss_1.r' };
    expect((await tokens.verifyToken(await forge(good))).sub).toBe('us_1');
    for (const bad of ['', 'abc', 'a.b.c', 'x'.repeat(MAX_TOKEN_LENGTH + 1)]) await expectInvalid(tokens.verifyToken(bad));
    const broken: Record<string, unknown>[] = [
      { ...good, userId: 'us_2' },
      { ...good, userId: undefined },
      { ...good, admin: undefined },
      { ...good, admin: { isAdmin: 'yes' } },
      { ...good, table: 7 },
      { ...good, exp: undefined },
      { ...good, jti: 'no-session-part' },
      { ...good, jti: '.r' },
    ];
    for (const payload of broken) await expectInvalid(tokens.verifyToken(await forge(payload)));
  });

  it('refuses an expired token, also when it is cached', async () => {
    const { sign, tokens, clock } = setup();
    const { token } = await sign({ ttlSeconds: 60 });
    await tokens.verifyToken(token); // cached now
    clock.advance(59_000);
    expect((await tokens.verifyToken(token)).sub).toBe('us_1');
    clock.advance(1_000);
    await expectInvalid(tokens.verifyToken(token));
    // Not cached: a token whose exp already passed.
    const fresh = setup();
    const old = await fresh.sign({ ttlSeconds: 1 });
    fresh.clock.advance(5_000);
    await expectInvalid(fresh.tokens.verifyToken(old.token));
  });

  it('refuses tokens of a revoked session, cached or not; other sessions are unaffected', async () => {
    const { sign, tokens, revocations } = setup();
    const a = await sign({ sessionId: 'ss_a' });
    const a2 = await sign({ sessionId: 'ss_a' });
    const b = await sign({ sessionId: 'ss_b' });
    await tokens.verifyToken(a.token); // cached
    revocations.revoke('ss_a');
    await expectInvalid(tokens.verifyToken(a.token));
    await expectInvalid(tokens.verifyToken(a2.token));
    expect((await tokens.verifyToken(b.token)).jti.startsWith('ss_b.')).toBe(true);
  });

  it('works with the cache disabled', async () => {
    const { sign, tokens, revocations } = setup({ cacheSize: 0 });
    const { token } = await sign();
    const pending = tokens.verifyToken(token);
    expect(pending).toBeInstanceOf(Promise);
    // Settled before the revocation below, which would otherwise (rightly) reject it.
    expect((await pending).sub).toBe('us_1');
    expect((await tokens.verifyToken(token)).sub).toBe('us_1');
    revocations.revoke('ss_abc');
    await expectInvalid(tokens.verifyToken(token));
  });
});

describe('parseBearer and verify(authorization)', () => {
  it('parses the Bearer scheme case-insensitively', () => {
    expect(parseBearer(undefined)).toBeNull();
    expect(parseBearer('Bearer abc.def.ghi')).toBe('abc.def.ghi');
    expect(parseBearer('bearer   abc')).toBe('abc');
  });

  it('refuses another scheme or an empty token with INVALID_TOKEN', () => {
    for (const h of ['', 'Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', 'abc.def.ghi', 'Bearer a b']) {
      expect(() => parseBearer(h)).toThrow(expect.objectContaining({ code: 'INVALID_TOKEN' }));
    }
  });

  it('verify answers null without a header, the token with one, 401 for a bad one', async () => {
    const { sign, tokens } = setup();
    expect(tokens.verify(undefined)).toBeNull();
    const { token } = await sign();
    expect((await tokens.verify(`Bearer ${token}`))?.sub).toBe('us_1');
    await expectInvalid(tokens.verify('Basic xyz'));
    await expectInvalid(tokens.verify('Bearer nope'));
  });
});

describe('RevocationList', () => {
  it('forgets a revocation only after every token of the session has expired', () => {
    const clock = new Clock();
    const list = new RevocationList(60, clock.now);
    list.revoke('ss_1');
    clock.advance(30_000);
    list.revoke('ss_2');
    clock.advance(31_000); // ss_1 revoked 61 s ago: within the 5 s slack, kept
    expect(list.isRevoked('ss_1')).toBe(true);
    clock.advance(5_000);
    expect(list.isRevoked('ss_1')).toBe(false);
    expect(list.isRevoked('ss_2')).toBe(true);
    expect(list.size).toBe(1);
  });

  it('loads revocations from storage', () => {
    const clock = new Clock();
    const list = new RevocationList(60, clock.now);
    list.load([
      { sessionId: 'ss_old', revokedAt: clock.t - 120_000 },
      { sessionId: 'ss_new', revokedAt: clock.t - 1_000 },
    ]);
    expect(list.isRevoked('ss_new')).toBe(true);
    expect(list.isRevoked('ss_old')).toBe(false);
  });
});

describe('Lru', () => {
  it('stays within its bound and evicts the least recently used', () => {
    const lru = new Lru<string, number>(3);
    for (const k of ['a', 'b', 'c']) lru.set(k, 1);
    lru.get('a');
    lru.set('d', 1);
    expect(lru.size).toBe(3);
    expect(lru.get('b')).toBeUndefined();
    expect(lru.get('a')).toBe(1);
    for (let i = 0; i < 1000; i++) lru.set(`k${i}`, i);
    expect(lru.size).toBe(3);
  });
});
