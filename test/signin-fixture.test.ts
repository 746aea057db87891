/**
 * Sign-in beyond the conformance project (test/fixtures/signin): the GitHub preset against a
 * loopback stand-in for GitHub's OAuth and user APIs, `onSignIn` / `onSignUp` with the method's
 * name for every method, and the rate limit of every auth route (docs/reference/auth.md, docs/reference/rate-limits.md).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeGitHub, type FakeGitHub } from './helpers/github.js';
import { browse } from './helpers/oidc.js';
import { bearer, ROOT, startServer, type Reply, type TestServer } from './helpers/server.js';
import { until } from './helpers/poll.js';
import { existsSync, readdirSync, readFileSync } from 'node:fs';

let s: TestServer;
let gh: FakeGitHub;
const APP = 'http://localhost/app';
const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
const fragmentOf = (u: string) => new URLSearchParams(new URL(u).hash.slice(1));
const githubSignIn = async (table = 'members') => fragmentOf(await browse(`${s.base}/auth/oauth/gh/start?table=${table}&redirectTo=${encodeURIComponent(APP)}`, (u) => u.startsWith(APP)));
const post = (path: string, body: unknown, headers?: Record<string, string>) => s.call('POST', path, body, headers);
/** The newest message to `to` whose text matches `pattern` (outbox files may be half-written when read). */
const mailTo = async (to: string, pattern: RegExp): Promise<RegExpExecArray> => {
  const dir = join(s.dataDir, 'outbox');
  const read = async () => {
    const texts: string[] = [];
    for (const f of existsSync(dir) ? readdirSync(dir).sort() : []) {
      try {
        const m = JSON.parse(readFileSync(join(dir, f), 'utf8')) as { to: string[]; text: string };
        if (m.to.includes(to)) texts.push(m.text);
      } catch {
        // still being written
      }
    }
    return texts
      .map((t) => pattern.exec(t))
      .filter((m) => m !== null)
      .at(-1);
  };
  return (await until(read, (m) => m !== undefined, `mail to ${to}`, 20_000))!;
};

beforeAll(async () => {
  gh = await startFakeGitHub('gh-client', 'gh-secret');
  s = await startServer({ project: join(ROOT, 'test/fixtures/signin'), env: { GH_BASE: gh.base } });
}, 180_000);
afterAll(async () => {
  await s?.dispose();
  await gh?.close();
});

describe('GitHub preset (OAuth 2.0 + user APIs)', { timeout: 180_000 }, () => {
  it('signs in with the verified primary email, PKCE checked by the stand-in; the same id twice is one user', async () => {
    gh.next = {
      id: 4242,
      login: 'octo',
      emails: [
        { email: 'other@gh.example', primary: false, verified: true },
        { email: 'Octo@GH.example', primary: true, verified: true },
      ],
    };
    const f = await githubSignIn();
    expect(f.get('error')).toBeNull();
    const access = f.get('access_token')!;
    const row = await s.get('/db', { table: 'members', where: { id: { eq: claimsOf(access).userId } } }, bearer(access));
    expect(row.status).toBe(403); // members has no table rules (closed), but the token verified: not 401
    const again = await githubSignIn();
    expect(claimsOf(again.get('access_token')!).userId).toBe(claimsOf(access).userId);
    expect(gh.tokenRequests.at(-1)!.get('code_verifier')).toMatch(/^[A-Za-z0-9_-]{43,128}$/);
  });

  it('an unverified primary email is not used: error, no token', async () => {
    gh.next = {
      id: 777,
      login: 'shady',
      emails: [
        { email: 'shady@gh.example', primary: true, verified: false },
        { email: 'alt@gh.example', primary: false, verified: true },
      ],
    };
    const f = await githubSignIn();
    expect(f.get('access_token')).toBeNull();
    expect(f.get('error')).toBe('OAUTH_FAILED');
  });
});

describe('onSignUp / onSignIn name the method', { timeout: 180_000 }, () => {
  it('password, otp, magicLink and oauth each reach the hooks', async () => {
    const email = `hooks.${Date.now()}@example.com`;
    const up = await post('/auth/sign-up', { type: 'signUp', table: 'members', email, password: 'hooks-password-1' });
    expect(up.status, up.text).toBe(200);
    const id = up.json.data.user.id;
    expect((await post('/auth/sign-in', { type: 'signIn', table: 'members', email, password: 'hooks-password-1' })).status).toBe(200);
    await post('/auth/otp/send', { type: 'sendOtp', table: 'members', email });
    const code = (await mailTo(email, /\b(\d{6})\b/))[1]!;
    expect((await post('/auth/otp/verify', { type: 'verifyOtp', table: 'members', email, code })).status).toBe(200);
    await post('/auth/magic-link', { type: 'sendMagicLink', table: 'members', email });
    const token = (await mailTo(email, /magic\?token=([A-Za-z0-9_-]+)/))[1]!;
    expect((await post('/auth/confirm', { type: 'confirmMagicLink', token, table: 'members' })).status).toBe(200);
    gh.next = { id: 9001, login: 'hooked', emails: [{ email: `gh.${email}`, primary: true, verified: true }] };
    const f = await githubSignIn();
    const ghId = claimsOf(f.get('access_token')!).userId;
    const log = await until(
      async () => (await s.get<{ data: { items: { userId: string; hook: string; method: string; provider: string | null }[] } }>('/db/list', { table: 'signin_log', limit: 100 })).json.data.items,
      // The hooks' rows are queued writes: under load they may land after the answers.
      (items) => items.filter((i) => i.userId === ghId).length >= 2 && items.filter((i) => i.userId === id).length >= 4,
      'hook rows',
    );
    // Compared as sets: queued writes from consecutive requests may commit in either order.
    const mine = log.filter((i) => i.userId === id).map((i) => `${i.hook}:${i.method}`);
    expect(mine.sort()).toEqual(['onSignIn:magicLink', 'onSignIn:otp', 'onSignIn:password', 'onSignUp:password']);
    expect(
      log
        .filter((i) => i.userId === ghId)
        .map((i) => `${i.hook}:${i.method}:${i.provider}`)
        .sort(),
    ).toEqual(['onSignIn:oauth:gh', 'onSignUp:oauth:gh']);
  });
});

describe('without otp.signUp', { timeout: 120_000 }, () => {
  it('an unknown address gets the same empty 200 and no code; any code is 401', async () => {
    const nobody = `nobody.${Date.now()}@example.com`;
    const r = await post('/auth/otp/send', { type: 'sendOtp', table: 'members', email: nobody });
    expect(r.status).toBe(200);
    expect(r.text).toBe('');
    await new Promise((done) => setTimeout(done, 500));
    const dir = join(s.dataDir, 'outbox');
    const sent = existsSync(dir) ? readdirSync(dir).filter((f) => readFileSync(join(dir, f), 'utf8').includes(nobody)) : [];
    expect(sent).toHaveLength(0);
    const v = await post('/auth/otp/verify', { type: 'verifyOtp', table: 'members', email: nobody, code: '123456' });
    expect(v.status).toBe(401);
    expect(v.json.error.code).toBe('INVALID_CREDENTIALS');
  });
});

describe('every auth route is rate limited per IP (docs/reference/auth.md, docs/reference/rate-limits.md)', { timeout: 180_000 }, () => {
  const third = async (send: () => Promise<Reply>, what: string, n = 2) => {
    for (let i = 0; i < n; i++) expect((await send()).status, what).not.toBe(429);
    const r = await send();
    expect(r.status, `${what}: ${r.text}`).toBe(429);
    expect(r.json.error.code).toBe('RATE_LIMITED');
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
  };
  const t = { table: 'tight' };
  const email = 'limit@example.com';

  it('per table: sign-up, sign-in, verify-email, reset-password, refresh and confirm naming it, otp, magic link, oauth start', async () => {
    await third(() => post('/auth/sign-up', { type: 'signUp', ...t, email, password: 'x' }), 'sign-up');
    await third(() => post('/auth/sign-in', { type: 'signIn', ...t, email, password: 'x' }), 'sign-in');
    await third(() => post('/auth/verify-email', { type: 'verifyEmail', ...t, email }), 'verify-email');
    await third(() => post('/auth/reset-password', { type: 'sendResetPassword', ...t, email }), 'reset-password');
    await third(() => post('/auth/refresh', { ...t, refreshToken: 'x' }), 'refresh (table)');
    await third(() => post('/auth/confirm', { ...t, type: 'confirmVerifyEmail', token: 'x' }), 'confirm (table)');
    await third(() => post('/auth/otp/send', { type: 'sendOtp', ...t, email }), 'otp');
    await third(() => post('/auth/magic-link', { type: 'sendMagicLink', ...t, email }), 'magic link');
    const start = async (): Promise<Reply> => {
      const r = await fetch(`${s.base}/auth/oauth/gh/start?table=tight&redirectTo=${encodeURIComponent(APP)}`, { redirect: 'manual' });
      const text = await r.text();
      return { status: r.status, text, json: text ? JSON.parse(text) : undefined, headers: r.headers };
    };
    await third(start, 'oauth start');
  });

  it('OTP send and verify share one counter', async () => {
    // The `otp` counter of `tight` is spent by the test above.
    const r = await post('/auth/otp/verify', { type: 'verifyOtp', ...t, email, code: '000000' });
    expect(r.status).toBe(429);
  });

  it('without a table: auth:refresh, auth:confirm (before any password is hashed), auth:logout, auth:changeEmail, auth:oauth', async () => {
    await third(() => post('/auth/refresh', { refreshToken: 'x' }), 'refresh');
    await third(() => post('/auth/confirm', { type: 'confirmResetPassword', token: 'x'.repeat(43), newPassword: 'p'.repeat(1024) }), 'confirm');
    await third(() => post('/auth/logout', {}), 'logout');
    await third(() => post('/auth/change-email', { type: 'sendChangeEmail', newEmail: 'n@example.com' }), 'change-email');
    // The callback's counter already holds the GitHub sign-ins above; it admits 6 a minute.
    const r = await until(
      () => s.call('GET', '/auth/oauth/gh/callback?state=bogus&code=x'),
      (x) => x.status === 429,
      'callback 429',
      20_000,
      1,
    );
    expect(r.json.error.code).toBe('RATE_LIMITED');
  });
});
