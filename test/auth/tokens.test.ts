/**
 * End-to-end: the access token and its claims, refresh rotation with reuse detection, logout, the
 * `users` row rules, and revocations across a restart (docs/reference/auth.md, docs/reference/conformance.md).
 * Sign-up and sign-in are in sign-up-in.test.ts; email flows, the admin-only routes and the
 * plaintext-password sweep in email.test.ts.
 */
import { rmSync } from 'node:fs';
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/expect.js';
import { scenarios, type ScenarioContext } from '../helpers/scenario.js';
import { bearer, secret, startServer, type TestServer } from '../helpers/server.js';
import { signIn, signInReply, signUp, startServerWithAdmin, uniqueEmail, type Session } from '../helpers/users.js';

const ADMIN = { email: 'root@example.com', password: 'admin-pass-1234' };
const PW = 'correct horse 1';
let s: TestServer;
let dataDir: string;
let adminToken: string;

beforeAll(async () => {
  ({ server: s, dataDir } = await startServerWithAdmin(ADMIN));
  ctx.server = s;
  adminToken = (await signIn(s, 'admins', ADMIN.email, ADMIN.password)).accessToken;
}, 120_000);
afterAll(async () => {
  await s?.dispose();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A fresh user: the sign-up answer's data. */
const newUser = (tag: string): Promise<Session> => signUp(s, uniqueEmail(tag), { password: PW });
const ownRow = (token: string, id: string) => s.get('/db', { table: 'users', where: { id: { eq: id } } }, bearer(token));

describe('access tokens', { timeout: 180_000 }, () => {
  let u: Session;
  beforeAll(async () => {
    u = await newUser('tok');
  });
  const key = () => new TextEncoder().encode(s.env.JWT_SECRET);
  const forge = (claims: Record<string, unknown>) => new SignJWT({ ...decodeJwt(u.accessToken), ...claims }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(key());

  it('is HS256 with sub/userId, table, admin.isAdmin false, iat, exp, jti and the custom claim plan', () => {
    expect(decodeProtectedHeader(u.accessToken).alg).toBe('HS256');
    const c = decodeJwt(u.accessToken);
    expect(c).toMatchObject({ sub: u.user.id, userId: u.user.id, table: 'users', admin: { isAdmin: false }, plan: 'free' });
    expect(c.exp! - c.iat!).toBe(u.expiresIn);
    expect(typeof c.jti).toBe('string');
  });

  it('401s INVALID_TOKEN for tampered, alg none, foreign-key and malformed tokens', async () => {
    const [h, p, sig] = u.accessToken.split('.') as [string, string, string];
    const claims = { ...decodeJwt(u.accessToken), admin: { isAdmin: true } };
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const flipped = sig.slice(0, 10) + (sig[10] === 'A' ? 'B' : 'A') + sig.slice(11);
    const bad = [
      `${h}.${b64(claims)}.${sig}`, // payload changed, signature kept
      `${h}.${p}.${flipped}`,
      `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`,
      `${b64({ alg: 'none', typ: 'JWT' })}.${p}.`,
      await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(secret())),
      'not.a.jwt',
    ];
    for (const token of bad) {
      expectError(await ownRow(token, u.user.id), 401, 'INVALID_TOKEN');
      // Even where rules let anyone in, a bad token is refused rather than treated as none.
      expectError(await s.get('/db/count', { table: 'users' }, bearer(token)), 401, 'INVALID_TOKEN');
    }
    expectError(await s.get('/db/count', { table: 'users' }, { authorization: `Basic ${u.accessToken}` }), 401, 'INVALID_TOKEN');
    expect((await s.get('/db/count', { table: 'users' })).status).toBe(200); // no token is not an error
  });

  it('401s an expired token that is otherwise valid', async () => {
    const now = Math.floor(Date.now() / 1000);
    // The same forging with a future exp is accepted, so the 401 below is the expiry alone.
    expect((await ownRow(await forge({ iat: now - 60, exp: now + 600 }), u.user.id)).status).toBe(200);
    expectError(await ownRow(await forge({ iat: now - 7200, exp: now - 3600 }), u.user.id), 401, 'INVALID_TOKEN');
  });

  it('recomputes the custom claim plan on sign-in and refresh', async () => {
    const r = await s.call('PATCH', '/db', { table: 'users', where: { id: { eq: u.user.id } }, updates: [{ column: 'plan', value: 'pro' }] }, bearer(u.accessToken));
    expect(r.status, r.text).toBe(200);
    expect(decodeJwt(u.accessToken).plan).toBe('free'); // a signed token never changes
    const refreshed = await s.call('POST', '/auth/refresh', { refreshToken: u.refreshToken });
    expect(decodeJwt(refreshed.json.data.accessToken).plan).toBe('pro');
    const again = await signInReply(s, 'users', u.user.email, PW);
    expect(decodeJwt(again.json.data.accessToken).plan).toBe('pro');
  });

  it('gives admin.isAdmin true only to rows of the admin table', async () => {
    const c = decodeJwt(adminToken);
    expect(c.admin).toEqual({ isAdmin: true });
    expect(c.table).toBe('admins');
    expect(c.sub).toMatch(/^ad_/);
    const r = await signInReply(s, 'admins', ADMIN.email, ADMIN.password);
    expect(r.json.data.user).toMatchObject({ email: ADMIN.email, isVerified: true });
    expect(r.text).not.toMatch(/password|argon2/i);
    expectError(await signInReply(s, 'admins', ADMIN.email, 'wrong-admin-pass'), 401, 'INVALID_CREDENTIALS');
    expect(decodeJwt<{ admin: { isAdmin: boolean } }>(u.accessToken).admin.isAdmin).toBe(false);
  });
});

describe('refresh and logout', { timeout: 180_000 }, () => {
  const refresh = (refreshToken: unknown) => s.call('POST', '/auth/refresh', { refreshToken });

  it('rotates the refresh token and answers a new working pair', async () => {
    const u = await newUser('rot');
    const r = await refresh(u.refreshToken);
    expect(r.status, r.text).toBe(200);
    const d = r.json.data;
    expect(Object.keys(d).sort()).toEqual(['accessToken', 'expiresIn', 'refreshToken', 'user']);
    expect(d.user.id).toBe(u.user.id);
    expect(d.refreshToken).not.toBe(u.refreshToken);
    expect(d.accessToken).not.toBe(u.accessToken);
    expect((await ownRow(d.accessToken, u.user.id)).status).toBe(200);
    expect((await refresh(d.refreshToken)).status).toBe(200);
  });

  it('revokes the whole session when a rotated refresh token is reused', async () => {
    const u = await newUser('reuse');
    const other = await signIn(s, 'users', u.user.email, PW);
    const next = (await refresh(u.refreshToken)).json.data;
    expectError(await refresh(u.refreshToken), 401, 'INVALID_TOKEN');
    expectError(await refresh(next.refreshToken), 401, 'INVALID_TOKEN');
    expectError(await ownRow(next.accessToken, u.user.id), 401, 'INVALID_TOKEN');
    expectError(await ownRow(u.accessToken, u.user.id), 401, 'INVALID_TOKEN');
    // Another session of the same user is not affected.
    expect((await ownRow(other.accessToken, u.user.id)).status).toBe(200);
    expect((await refresh(other.refreshToken)).status).toBe(200);
  });

  it('logout answers 204 and revokes the access and refresh tokens of that session only', async () => {
    const u = await newUser('out');
    const other = await signIn(s, 'users', u.user.email, PW);
    const r = await s.call('POST', '/auth/logout', undefined, bearer(u.accessToken));
    expect(r.status, r.text).toBe(204);
    expect(r.text).toBe('');
    expectError(await ownRow(u.accessToken, u.user.id), 401, 'INVALID_TOKEN');
    expectError(await s.call('POST', '/auth/logout', undefined, bearer(u.accessToken)), 401, 'INVALID_TOKEN');
    expectError(await refresh(u.refreshToken), 401, 'INVALID_TOKEN');
    expect((await ownRow(other.accessToken, u.user.id)).status).toBe(200);
    expectError(await s.call('POST', '/auth/logout'), 401, 'UNAUTHENTICATED');
  });
});

const ctx: ScenarioContext = { server: null as unknown as TestServer, who: {}, vars: {} };
const refresh = (name: string, body: object, status: number, code: string) => ({ name, method: 'POST', path: '/auth/refresh', body, status, code });

scenarios('refresh refusals', ctx, [
  refresh('401 for an unknown refresh token', { refreshToken: 'A'.repeat(43) }, 401, 'INVALID_TOKEN'),
  refresh('401 for a malformed refresh token', { refreshToken: 'short' }, 401, 'INVALID_TOKEN'),
  refresh('400 for a missing refresh token', {}, 400, 'BAD_REQUEST'),
]);

describe('users row rules (docs/reference/conformance.md)', { timeout: 180_000 }, () => {
  beforeAll(async () => {
    const [a, b] = [await newUser('rowA'), await newUser('rowB')];
    ctx.who = { a: a.auth, b: b.auth, admin: bearer(adminToken) };
    ctx.vars = { a: a.id, b: b.id };
  });
  const user =
    (...keys: string[]) =>
    (c: ScenarioContext) => ({ table: 'users', where: { id: keys.length === 1 ? { eq: c.vars[keys[0]!] } : { in: keys.map((k) => c.vars[k]) } } });
  const update = (key: string, column: string, value: unknown) => (c: ScenarioContext) => ({ ...user(key)(c), updates: [{ column, value }] });

  scenarios('reads', ctx, [
    { name: 'a user reads their own row', method: 'GET', path: '/db', as: 'b', body: user('b'), status: 200, like: (c) => ({ id: c.vars.b }) },
    { name: "a user may not read another's row", method: 'GET', path: '/db', as: 'b', body: user('a'), status: 403, code: 'FORBIDDEN' },
    { name: "nor a match that includes another's row", method: 'GET', path: '/db', as: 'b', body: user('a', 'b'), status: 403, code: 'FORBIDDEN' },
    { name: 'anonymous callers read no row', method: 'GET', path: '/db', body: user('b'), status: 403, code: 'FORBIDDEN' },
    { name: 'an admin reads any row', method: 'GET', path: '/db', as: 'admin', body: user('a'), status: 200, like: (c) => ({ id: c.vars.a }) },
    { name: 'a user may not list', method: 'GET', path: '/db/list', as: 'a', body: { table: 'users' }, status: 403, code: 'FORBIDDEN' },
    { name: 'anonymous callers may not list', method: 'GET', path: '/db/list', body: { table: 'users' }, status: 403, code: 'FORBIDDEN' },
  ]);

  it('lists for admins, without passwords; counts for anyone', async () => {
    const list = await s.get('/db/list', { table: 'users', limit: 1000 }, bearer(adminToken));
    expect(list.status, list.text).toBe(200);
    expect(list.json.data.items.map((x) => x.id)).toEqual(expect.arrayContaining([ctx.vars.a, ctx.vars.b]));
    expect(list.text).not.toMatch(/password|argon2/i);
    const count = await s.get('/db/count', { table: 'users' });
    expect(count.status).toBe(200);
    expect(count.json.data).toBe(list.json.data.total);
  });

  scenarios('writes', ctx, [
    { name: 'a user updates their own row', method: 'PATCH', path: '/db', as: 'b', body: update('b', 'displayName', 'B'), status: 200, like: { displayName: 'B' } },
    { name: "a user may not update another's row", method: 'PATCH', path: '/db', as: 'b', body: update('a', 'displayName', 'B'), status: 403, code: 'FORBIDDEN' },
    {
      name: "isVerified is the server's: a user cannot verify themselves through /db",
      method: 'PATCH',
      path: '/db',
      as: 'b',
      body: update('b', 'isVerified', true),
      status: 200,
      after: async (r, c) => {
        expect(r.json?.data?.isVerified ?? false).toBe(false);
        expect((await s.get('/db', user('b')(c), c.who.b)).json.data.isVerified).toBe(false);
      },
    },
    { name: 'password is not writable through /db', method: 'PATCH', path: '/db', as: 'b', body: update('b', 'password', 'plain text pw'), status: 400, code: 'BAD_REQUEST' },
    { name: 'password cannot be filtered on', method: 'GET', path: '/db', as: 'b', body: { table: 'users', where: { password: { eq: 'x' } } }, status: 400, code: 'BAD_REQUEST' },
  ]);
});

describe('after a restart', { timeout: 180_000 }, () => {
  it('keeps sessions, and keeps revoked ones revoked', async () => {
    const kept = await newUser('keep');
    const gone = await newUser('gone');
    expect((await s.call('POST', '/auth/logout', undefined, bearer(gone.accessToken))).status).toBe(204);
    expect(await s.stop()).toBe(0);
    s = ctx.server = await startServer({ dataDir, env: s.env });
    expectError(await ownRow(gone.accessToken, gone.user.id), 401, 'INVALID_TOKEN');
    expect((await ownRow(kept.accessToken, kept.user.id)).status).toBe(200);
    expect((await s.call('POST', '/auth/refresh', { refreshToken: kept.refreshToken })).status).toBe(200);
  });
});
