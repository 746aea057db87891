/**
 * End-to-end OpenID Connect sign-in (docs/reference/auth.md, docs/reference/conformance.md) against a real OpenID Provider
 * (`oidc-provider`) on loopback, through the conformance project's provider `test`
 * (OIDC_ISSUER / OIDC_CLIENT_ID / OIDC_CLIENT_SECRET): the authorization-code flow with PKCE
 * driven over HTTP, tokens that work afterwards, one user per subject, linking on a verified
 * email only, replayed and tampered state, the redirect allow list, an unknown provider.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browse, startOidcProvider, type TestOp } from './helpers/oidc.js';
import { bearer, freePort, startServer, type TestServer } from './helpers/server.js';

const APP = 'http://localhost/app';
let s: TestServer;
let op: TestOp;

const startUrl = (redirectTo = APP, provider = 'test', table = 'users') => `/auth/oauth/${provider}/start?table=${table}&redirectTo=${encodeURIComponent(redirectTo)}`;
const isApp = (u: string) => u.startsWith(APP);
const isCallback = (u: string) => u.startsWith(`${s.base}/auth/oauth/test/callback`);
const fragment = (u: string) => new URLSearchParams(new URL(u).hash.slice(1));

/** Start at Tablebase, through the provider, back to the app: the fragment of the final URL. */
async function signInAs(account: string): Promise<URLSearchParams> {
  op.nextAccount = account;
  return fragment(await browse(s.base + startUrl(), isApp));
}

beforeAll(async () => {
  const port = await freePort();
  const env = { OIDC_ISSUER: `http://127.0.0.1:${port}`, OIDC_CLIENT_ID: 'tb-conformance', OIDC_CLIENT_SECRET: 'a-test-client-secret-of-some-length' };
  s = await startServer({ env });
  op = await startOidcProvider({
    port,
    clientId: env.OIDC_CLIENT_ID,
    clientSecret: env.OIDC_CLIENT_SECRET,
    redirectUris: [`${s.base}/auth/oauth/test/callback`],
    accounts: {
      ann: { email: 'ann@oidc.example', emailVerified: true },
      bob: { email: 'bob@oidc.example', emailVerified: false },
      linker: { email: 'linker@oidc.example', emailVerified: true },
      liar: { email: 'victim@oidc.example', emailVerified: false },
    },
  });
}, 180_000);
afterAll(async () => {
  await s?.dispose();
  await op?.close();
});

describe('OpenID Connect sign-in (provider `test`)', { timeout: 180_000 }, () => {
  it('start redirects to the provider with state, nonce and PKCE S256', async () => {
    const r = await fetch(s.base + startUrl(), { redirect: 'manual' });
    expect(r.status).toBe(302);
    const to = new URL(r.headers.get('location')!);
    expect(to.origin).toBe(op.issuer);
    expect(to.searchParams.get('code_challenge_method')).toBe('S256');
    expect(to.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(to.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(to.searchParams.get('nonce')).toBeTruthy();
    expect(to.searchParams.get('redirect_uri')).toBe(`${s.base}/auth/oauth/test/callback`);
    expect(to.searchParams.get('client_id')).toBe('tb-conformance');
  });

  it('the full code flow signs in; the tokens work; the user is verified with no password', async () => {
    const f = await signInAs('ann');
    expect(f.get('error')).toBeNull();
    expect(f.get('token_type')).toBe('bearer');
    expect(Number(f.get('expires_in'))).toBeGreaterThan(0);
    const access = f.get('access_token')!;
    const claims = JSON.parse(Buffer.from(access.split('.')[1]!, 'base64url').toString());
    const row = await s.get('/db', { table: 'users', where: { id: { eq: claims.userId } } }, bearer(access));
    expect(row.status, row.text).toBe(200);
    expect(row.json.data).toMatchObject({ email: 'ann@oidc.example', isVerified: true });
    // The refresh token works too.
    const refreshed = await s.call('POST', '/auth/refresh', { refreshToken: f.get('refresh_token') });
    expect(refreshed.status, refreshed.text).toBe(200);
    // No password was set: password sign-in fails like any wrong password.
    const pw = await s.call('POST', '/auth/sign-in', { type: 'signIn', table: 'users', email: 'ann@oidc.example', password: 'whatever-password' });
    expect(pw.status).toBe(401);
  });

  it('the same subject twice is one user', async () => {
    const a = JSON.parse(Buffer.from((await signInAs('ann')).get('access_token')!.split('.')[1]!, 'base64url').toString());
    const b = JSON.parse(Buffer.from((await signInAs('ann')).get('access_token')!.split('.')[1]!, 'base64url').toString());
    expect(a.userId).toBe(b.userId);
    const count = await s.get('/db/count', { table: 'users', where: { email: { eq: 'ann@oidc.example' } } });
    expect(count.json.data).toBe(1);
  });

  it('links to an existing account on a verified email', async () => {
    const up = await s.call('POST', '/auth/sign-up', { type: 'signUp', table: 'users', email: 'linker@oidc.example', password: 'linker-password-1' });
    expect(up.status, up.text).toBe(200);
    const f = await signInAs('linker');
    const claims = JSON.parse(Buffer.from(f.get('access_token')!.split('.')[1]!, 'base64url').toString());
    expect(claims.userId).toBe(up.json.data.user.id);
  });

  it('never links on an unverified email: the browser gets an error, no token', async () => {
    const up = await s.call('POST', '/auth/sign-up', { type: 'signUp', table: 'users', email: 'victim@oidc.example', password: 'victim-password-1' });
    expect(up.status).toBe(200);
    const f = await signInAs('liar');
    expect(f.get('access_token')).toBeNull();
    expect(f.get('error')).toBe('CONFLICT');
  });

  it('an unverified email with no account creates an unverified row', async () => {
    const f = await signInAs('bob');
    const access = f.get('access_token')!;
    const claims = JSON.parse(Buffer.from(access.split('.')[1]!, 'base64url').toString());
    const row = await s.get('/db', { table: 'users', where: { id: { eq: claims.userId } } }, bearer(access));
    expect(row.json.data).toMatchObject({ email: 'bob@oidc.example', isVerified: false });
  });

  it('a replayed callback answers an error, never a second token', async () => {
    op.nextAccount = 'ann';
    const callback = await browse(s.base + startUrl(), isCallback);
    const first = await fetch(callback, { redirect: 'manual' });
    expect(first.status).toBe(302);
    expect(fragment(first.headers.get('location')!).get('access_token')).toBeTruthy();
    const again = await fetch(callback, { redirect: 'manual' });
    expect(again.status).toBe(302);
    const f = fragment(again.headers.get('location')!);
    expect(f.get('access_token')).toBeNull();
    expect(f.get('error')).toBe('INVALID_OAUTH_STATE');
  });

  it('a provider that posts its answer (form_post) is served by POST on the callback', async () => {
    op.nextAccount = 'ann';
    const callback = new URL(await browse(s.base + startUrl(), isCallback));
    const r = await fetch(`${s.base}${callback.pathname}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: callback.searchParams.toString(),
    });
    expect(r.status).toBe(302);
    expect(fragment(r.headers.get('location')!).get('access_token')).toBeTruthy();
    const json = await fetch(`${s.base}${callback.pathname}`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(json.status).toBe(415);
  });

  it('a tampered state is 400 (no redirectTo can be trusted)', async () => {
    op.nextAccount = 'ann';
    const callback = new URL(await browse(s.base + startUrl(), isCallback));
    const state = callback.searchParams.get('state')!;
    callback.searchParams.set('state', (state[0] === 'A' ? 'B' : 'A') + state.slice(1));
    const r = await fetch(callback, { redirect: 'manual' });
    expect(r.status).toBe(400);
    expect((await r.json()).error.code).toBe('INVALID_OAUTH_STATE');
    const none = await fetch(`${s.base}/auth/oauth/test/callback?code=x`, { redirect: 'manual' });
    expect(none.status).toBe(400);
  });

  it('a code swapped into another sign-in fails the PKCE / nonce checks', async () => {
    op.nextAccount = 'ann';
    const a = new URL(await browse(s.base + startUrl(), isCallback));
    const b = new URL(await browse(s.base + startUrl(), isCallback));
    b.searchParams.set('code', a.searchParams.get('code')!);
    const r = await fetch(b, { redirect: 'manual' });
    expect(r.status).toBe(302);
    expect(fragment(r.headers.get('location')!).get('error')).toBe('OAUTH_FAILED');
  });

  it('redirectTo outside the allow list is 400; an unknown provider or table is 404', async () => {
    for (const bad of ['http://evil.example/app', 'http://localhost/app/../x', 'http://localhost/appx', 'http://localhost/app#x']) {
      const r = await s.call('GET', startUrl(bad));
      expect(r.status, bad).toBe(400);
      expect(r.json.error.code).toBe('BAD_REQUEST');
    }
    expect((await s.call('GET', startUrl(APP, 'nope'))).status).toBe(404);
    expect((await s.call('GET', startUrl(APP, 'test', 'tasks'))).status).toBe(404);
    expect((await s.call('GET', startUrl(APP, 'test', 'admins'))).status).toBe(404);
  });
});

describe('a client registered for client_secret_post', { timeout: 180_000 }, () => {
  let s2: TestServer;
  let op2: TestOp;
  beforeAll(async () => {
    const port = await freePort();
    const env = { OIDC_ISSUER: `http://127.0.0.1:${port}`, OIDC_CLIENT_ID: 'tb-post', OIDC_CLIENT_SECRET: 'another-test-client-secret' };
    s2 = await startServer({ env });
    op2 = await startOidcProvider({
      port,
      clientId: env.OIDC_CLIENT_ID,
      clientSecret: env.OIDC_CLIENT_SECRET,
      redirectUris: [`${s2.base}/auth/oauth/test/callback`],
      accounts: { cy: { email: 'cy@oidc.example', emailVerified: true } },
      tokenEndpointAuthMethod: 'client_secret_post',
    });
  }, 180_000);
  afterAll(async () => {
    await s2?.dispose();
    await op2?.close();
  });

  // oidc-provider accepts basic and post alike for a secret client, so this shows the registration
  // works, not the invalid_client retry (a stricter server's case).
  it('signs in', async () => {
    const url = await browse(`${s2.base}/auth/oauth/test/start?table=users&redirectTo=${encodeURIComponent(APP)}`, isApp);
    const f = fragment(url);
    expect(f.get('error')).toBeNull();
    expect(f.get('access_token')).toBeTruthy();
  });
});
