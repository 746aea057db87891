/**
 * End-to-end: password auth against a real server of the conformance project (SPEC §8, §12,
 * §13.2, §13.4, §13.15, §13.16): sign-up, sign-in, the access token and its claims, refresh
 * rotation with reuse detection, logout, the `users` row rules, and revocations across a restart.
 * Email flows (verify, reset, SMTP), the admin-only routes and the plaintext-password sweep are in
 * auth-email.test.ts.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, databaseArgs, ROOT, secret, startServer, type Reply, type TestServer } from './helpers/server.js';

const ADMIN = { email: 'root@example.com', password: 'admin-pass-1234' };
let s: TestServer;
let dataDir: string;
let adminToken: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'tb-auth-'));
  const env = { JWT_SECRET: secret(), PASSWORD_SECRET: secret() };
  // The admin row must exist before the server opens the database, hashed with the same pepper.
  const args = [
    'bin/tablebase.mjs',
    'admin',
    'create',
    '--project',
    'examples/conformance',
    '--data',
    dataDir,
    ...(await databaseArgs(dataDir)),
    '--table',
    'admins',
    '--email',
    ADMIN.email,
    '--password',
    ADMIN.password,
  ];
  await promisify(execFile)(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, timeout: 60_000 });
  s = await startServer({ dataDir, env });
  adminToken = (await signIn('admins', ADMIN.email, ADMIN.password)).json.data.accessToken;
}, 120_000);
afterAll(async () => {
  await s?.dispose();
  rmSync(dataDir, { recursive: true, force: true });
});

let seq = 0;
const uniqueEmail = (tag: string) => `${tag}.${Date.now().toString(36)}.${++seq}@example.com`;
const signUp = (email: string, password = 'correct horse 1', extra: Record<string, unknown> = {}) => s.call('POST', '/auth/sign-up', { type: 'signUp', table: 'users', email, password, ...extra });
const signIn = (table: string, email: string, password: string) => s.call('POST', '/auth/sign-in', { type: 'signIn', table, email, password });
type Session = { user: Record<string, any>; accessToken: string; refreshToken: string; expiresIn: number };
/** A fresh user: the sign-up answer's data. */
async function newUser(tag: string): Promise<Session> {
  const r = await signUp(uniqueEmail(tag));
  expect(r.status, r.text).toBe(200);
  return r.json.data;
}
const ownRow = (token: string, id: string) => s.get('/db', { table: 'users', where: { id: { eq: id } } }, bearer(token));
const expectError = (r: Reply, status: number, code: string) => {
  expect(r.status, r.text).toBe(status);
  expect(r.json.error.code).toBe(code);
};

describe('sign-up', { timeout: 60_000 }, () => {
  it('answers {user, accessToken, refreshToken, expiresIn} with the camelCase row and no password', async () => {
    const email = uniqueEmail('Shape');
    const r = await signUp(`  ${email.toUpperCase()} `, 'correct horse 1', { object: { displayName: 'Ann' } });
    expect(r.status, r.text).toBe(200);
    const d = r.json.data;
    expect(Object.keys(d).sort()).toEqual(['accessToken', 'expiresIn', 'refreshToken', 'user']);
    expect(Object.keys(d.user).sort()).toEqual(['createdAt', 'displayName', 'email', 'id', 'isVerified', 'plan', 'updatedAt']);
    expect(d.user).toMatchObject({ email: email.toLowerCase(), isVerified: false, displayName: 'Ann', plan: 'free' });
    expect(d.user.id).toMatch(/^us_[0-9a-z]{16,32}$/);
    expect(d.user.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(typeof d.accessToken).toBe('string');
    expect(d.refreshToken).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(d.expiresIn).toBe(3600);
    expect(r.text).not.toMatch(/password|argon2/i);
    // The token is immediately usable.
    expect((await ownRow(d.accessToken, d.user.id)).json.data).toEqual(d.user);
  });

  it('400s for object fields outside signUpFields, and creates nothing', async () => {
    const before = (await s.get('/db/count', { table: 'users' })).json.data;
    for (const object of [{ plan: 'pro' }, { isVerified: true }, { displayName: 'x', id: 'us_0000000000000000' }, { nope: 1 }]) {
      expectError(await signUp(uniqueEmail('fields'), 'correct horse 1', { object }), 400, 'BAD_REQUEST');
    }
    expectError(await signUp(uniqueEmail('fields'), 'correct horse 1', { object: { displayName: 5 } }), 400, 'BAD_REQUEST');
    expect((await s.get('/db/count', { table: 'users' })).json.data).toBe(before);
  });

  it('409s on a taken email, also when it differs only in case and whitespace', async () => {
    const email = uniqueEmail('taken');
    expect((await signUp(email)).status).toBe(200);
    expectError(await signUp(email, 'another password'), 409, 'CONFLICT');
    expectError(await signUp(`\t ${email.toUpperCase()}  `, 'another password'), 409, 'CONFLICT');
  });

  it('400s for a wrong or missing type, a bad email and a password outside 8..1024 characters', async () => {
    const body = { table: 'users', email: uniqueEmail('type'), password: 'correct horse 1' };
    expectError(await s.call('POST', '/auth/sign-up', { ...body, type: 'signIn' }), 400, 'BAD_REQUEST');
    expectError(await s.call('POST', '/auth/sign-up', body), 400, 'BAD_REQUEST');
    expectError(await signUp('not-an-email'), 400, 'BAD_REQUEST');
    expectError(await signUp(uniqueEmail('short'), '7chars!'), 400, 'BAD_REQUEST');
    expectError(await signUp(uniqueEmail('long'), 'x'.repeat(1025)), 400, 'BAD_REQUEST');
    expect((await signUp(uniqueEmail('min'), '8chars!!')).status).toBe(200);
  });

  it('404s for a table that is not an auth table, an unknown table or none (SPEC §13.2); 403s admins', async () => {
    for (const extra of [{ table: 'tasks' }, { table: 'task_board' }, { table: 'nope' }, {}]) {
      const base = { email: uniqueEmail('nt'), password: 'correct horse 1', ...extra };
      expectError(await s.call('POST', '/auth/sign-up', { type: 'signUp', ...base }), 404, 'NOT_FOUND');
      expectError(await s.call('POST', '/auth/sign-in', { type: 'signIn', ...base }), 404, 'NOT_FOUND');
      expectError(await s.call('POST', '/auth/verify-email', { email: base.email, ...extra }), 404, 'NOT_FOUND');
      expectError(await s.call('POST', '/auth/reset-password', { type: 'sendResetPassword', email: base.email, ...extra }), 404, 'NOT_FOUND');
    }
    // The admins table exists but its canSignUp denies.
    expectError(await s.call('POST', '/auth/sign-up', { type: 'signUp', table: 'admins', email: uniqueEmail('adm'), password: 'correct horse 1' }), 403, 'FORBIDDEN');
  });
});

describe('sign-in', { timeout: 60_000 }, () => {
  it('answers the same shape as sign-up, normalizing the email', async () => {
    const email = uniqueEmail('In');
    const up = (await signUp(email)).json.data;
    const r = await signIn('users', `  ${email.toUpperCase()}`, 'correct horse 1');
    expect(r.status, r.text).toBe(200);
    expect(r.json.data.user).toEqual(up.user);
    expect(r.json.data.expiresIn).toBe(3600);
    expect(r.json.data.refreshToken).not.toBe(up.refreshToken);
    expect(r.text).not.toMatch(/password|argon2/i);
  });

  it('answers one identical 401 body for an unknown email and a wrong password', async () => {
    const email = uniqueEmail('cred');
    await signUp(email);
    const wrong = await signIn('users', email, 'correct horse 2');
    const unknown = await signIn('users', uniqueEmail('ghost'), 'correct horse 1');
    const notEmail = await signIn('users', 'not-an-email', 'correct horse 1');
    const huge = await signIn('users', email, 'x'.repeat(5000));
    expectError(wrong, 401, 'INVALID_CREDENTIALS');
    for (const r of [unknown, notEmail, huge]) {
      expect(r.status).toBe(401);
      expect(r.text).toBe(wrong.text);
      expect(r.headers.get('content-type')).toBe(wrong.headers.get('content-type'));
    }
  });

  it('400s for a wrong type or a missing password', async () => {
    const body = { table: 'users', email: uniqueEmail('t') };
    expectError(await s.call('POST', '/auth/sign-in', { ...body, type: 'signUp', password: 'correct horse 1' }), 400, 'BAD_REQUEST');
    expectError(await s.call('POST', '/auth/sign-in', { ...body, type: 'signIn' }), 400, 'BAD_REQUEST');
  });
});

describe('access tokens', { timeout: 60_000 }, () => {
  let u: Session;
  beforeAll(async () => {
    u = await newUser('tok');
  });
  const key = () => new TextEncoder().encode(s.env.JWT_SECRET);
  const forge = (claims: Record<string, unknown>) => new SignJWT({ ...decodeJwt(u.accessToken), ...claims }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(key());

  it('is HS256 with sub/userId, table, admin.isAdmin false, iat, exp, jti and the custom claim plan', () => {
    expect(decodeProtectedHeader(u.accessToken).alg).toBe('HS256');
    const c = decodeJwt(u.accessToken) as Record<string, any>;
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
    const again = await signIn('users', u.user.email, 'correct horse 1');
    expect(decodeJwt(again.json.data.accessToken).plan).toBe('pro');
  });

  it('gives admin.isAdmin true only to rows of the admin table', async () => {
    const c = decodeJwt(adminToken) as Record<string, any>;
    expect(c.admin).toEqual({ isAdmin: true });
    expect(c.table).toBe('admins');
    expect(c.sub).toMatch(/^ad_/);
    const r = await signIn('admins', ADMIN.email, ADMIN.password);
    expect(r.json.data.user).toMatchObject({ email: ADMIN.email, isVerified: true });
    expect(r.text).not.toMatch(/password|argon2/i);
    expectError(await signIn('admins', ADMIN.email, 'wrong-admin-pass'), 401, 'INVALID_CREDENTIALS');
    expect((decodeJwt(u.accessToken) as any).admin.isAdmin).toBe(false);
  });
});

describe('refresh and logout', { timeout: 60_000 }, () => {
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
    const other = (await signIn('users', u.user.email, 'correct horse 1')).json.data;
    const next = (await refresh(u.refreshToken)).json.data;
    expectError(await refresh(u.refreshToken), 401, 'INVALID_TOKEN');
    expectError(await refresh(next.refreshToken), 401, 'INVALID_TOKEN');
    expectError(await ownRow(next.accessToken, u.user.id), 401, 'INVALID_TOKEN');
    expectError(await ownRow(u.accessToken, u.user.id), 401, 'INVALID_TOKEN');
    // Another session of the same user is not affected.
    expect((await ownRow(other.accessToken, u.user.id)).status).toBe(200);
    expect((await refresh(other.refreshToken)).status).toBe(200);
  });

  it('401s unknown and malformed refresh tokens, 400s a missing one', async () => {
    expectError(await refresh('A'.repeat(43)), 401, 'INVALID_TOKEN');
    expectError(await refresh('short'), 401, 'INVALID_TOKEN');
    expectError(await s.call('POST', '/auth/refresh', {}), 400, 'BAD_REQUEST');
  });

  it('logout answers 204 and revokes the access and refresh tokens of that session only', async () => {
    const u = await newUser('out');
    const other = (await signIn('users', u.user.email, 'correct horse 1')).json.data;
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

describe('users row rules (SPEC §12)', { timeout: 60_000 }, () => {
  let a: Session, b: Session;
  beforeAll(async () => {
    a = await newUser('rowA');
    b = await newUser('rowB');
  });

  it('a user reads only their own row; anonymous callers none', async () => {
    expect((await ownRow(b.accessToken, b.user.id)).json.data.id).toBe(b.user.id);
    expectError(await ownRow(b.accessToken, a.user.id), 403, 'FORBIDDEN');
    expectError(await s.get('/db', { table: 'users', where: { id: { in: [a.user.id, b.user.id] } } }, bearer(b.accessToken)), 403, 'FORBIDDEN');
    expectError(await s.get('/db', { table: 'users', where: { id: { eq: b.user.id } } }), 403, 'FORBIDDEN');
    expect((await s.get('/db', { table: 'users', where: { id: { eq: a.user.id } } }, bearer(adminToken))).json.data.id).toBe(a.user.id);
  });

  it('lists only for admins; counts for anyone', async () => {
    expectError(await s.get('/db/list', { table: 'users' }, bearer(a.accessToken)), 403, 'FORBIDDEN');
    expectError(await s.get('/db/list', { table: 'users' }), 403, 'FORBIDDEN');
    const list = await s.get('/db/list', { table: 'users', limit: 1000 }, bearer(adminToken));
    expect(list.status, list.text).toBe(200);
    expect(list.json.data.items.map((x: any) => x.id)).toEqual(expect.arrayContaining([a.user.id, b.user.id]));
    expect(list.text).not.toMatch(/password|argon2/i);
    const count = await s.get('/db/count', { table: 'users' });
    expect(count.status).toBe(200);
    expect(count.json.data).toBe(list.json.data.total);
  });

  it('a user updates only their own row and cannot filter on password', async () => {
    const upd = (token: string, id: string) => s.call('PATCH', '/db', { table: 'users', where: { id: { eq: id } }, updates: [{ column: 'displayName', value: 'B' }] }, bearer(token));
    expect((await upd(b.accessToken, b.user.id)).json.data.displayName).toBe('B');
    expectError(await upd(b.accessToken, a.user.id), 403, 'FORBIDDEN');
    // isVerified is the server's: a user cannot verify themselves through /db.
    const self = await s.call('PATCH', '/db', { table: 'users', where: { id: { eq: b.user.id } }, updates: [{ column: 'isVerified', value: true }] }, bearer(b.accessToken));
    expect(self.json?.data?.isVerified ?? false).toBe(false);
    expect((await ownRow(b.accessToken, b.user.id)).json.data.isVerified).toBe(false);
    expectError(
      await s.call('PATCH', '/db', { table: 'users', where: { id: { eq: b.user.id } }, updates: [{ column: 'password', value: 'plain text pw' }] }, bearer(b.accessToken)),
      400,
      'BAD_REQUEST',
    );
    expectError(await s.get('/db', { table: 'users', where: { password: { eq: 'x' } } }, bearer(b.accessToken)), 400, 'BAD_REQUEST');
  });
});

describe('after a restart', { timeout: 60_000 }, () => {
  it('keeps sessions, and keeps revoked ones revoked', async () => {
    const kept = await newUser('keep');
    const gone = await newUser('gone');
    expect((await s.call('POST', '/auth/logout', undefined, bearer(gone.accessToken))).status).toBe(204);
    expect(await s.stop()).toBe(0);
    s = await startServer({ dataDir, env: s.env });
    expectError(await ownRow(gone.accessToken, gone.user.id), 401, 'INVALID_TOKEN');
    expect((await ownRow(kept.accessToken, kept.user.id)).status).toBe(200);
    expect((await s.call('POST', '/auth/refresh', { refreshToken: kept.refreshToken })).status).toBe(200);
  });
});
