import { exportPKCS8, exportSPKI, generateKeyPair, importSPKI, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { redirectAllowed } from './flow.js';
import { appleClientSecret, isLoopbackHttp, providerFlow } from './providers.js';

describe('OAuth providers', () => {
  it('Apple: the client secret is an ES256 JWT (iss team, sub client, aud Apple, kid) valid 5 minutes', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const now = Date.now();
    const jwt = await appleClientSecret({ clientId: 'com.example.web', teamId: 'TEAM123456', keyId: 'KEY1234567', privateKey: await exportPKCS8(privateKey) }, now);
    const { payload, protectedHeader } = await jwtVerify(jwt, await importSPKI(await exportSPKI(publicKey), 'ES256'), {
      audience: 'https://appleid.apple.com',
      issuer: 'TEAM123456',
      subject: 'com.example.web',
    });
    expect(protectedHeader).toMatchObject({ alg: 'ES256', kid: 'KEY1234567' });
    expect(payload.exp! - payload.iat!).toBe(300);
  });

  it('plain http only on loopback', () => {
    expect(isLoopbackHttp('http://127.0.0.1:8080')).toBe(true);
    expect(isLoopbackHttp('http://localhost/x')).toBe(true);
    expect(isLoopbackHttp('http://example.com')).toBe(false);
    expect(isLoopbackHttp('https://127.0.0.1')).toBe(false);
    expect(() => providerFlow('op', { type: 'oidc', issuer: 'http://idp.example.com', clientId: 'x' })).toThrow(/https/);
    expect(() => providerFlow('gh', { type: 'github', clientId: 'x', clientSecret: 'y', endpoints: { token: 'http://evil.example/t' } })).toThrow(/https/);
    expect(providerFlow('op', { type: 'oidc', issuer: 'http://127.0.0.1:1', clientId: 'x' }).oidc).toBe(true);
  });

  it('entries are checked at start: names, client ids, types, Microsoft tenants', () => {
    expect(() => providerFlow('Bad Name', { type: 'google', clientId: 'x', clientSecret: 'y' })).toThrow(/names/);
    expect(() => providerFlow('g', { type: 'google', clientId: '', clientSecret: 'y' })).toThrow(/clientId/);
    expect(() => providerFlow('m', { type: 'microsoft', clientId: 'x', clientSecret: 'y', tenant: '../x' })).toThrow(/tenant/);
    expect(() => providerFlow('z', { type: 'zzz', clientId: 'x' } as never)).toThrow(/unknown type/);
    expect(providerFlow('gh', { type: 'github', clientId: 'x', clientSecret: 'y' }).oidc).toBe(false);
    expect(providerFlow('a', { type: 'apple', clientId: 'x', teamId: 't', keyId: 'k', privateKey: 'p' }).authParams).toEqual({ response_mode: 'form_post' });
  });

  it('redirectTo: exact entries, prefix entries ending in *, no fragments, whitespace or backslashes', () => {
    const list = ['http://localhost/app', 'https://app.example/cb/*'];
    expect(redirectAllowed('http://localhost/app', list)).toBe(true);
    expect(redirectAllowed('http://localhost/app/', list)).toBe(false);
    expect(redirectAllowed('http://localhost/application', list)).toBe(false);
    expect(redirectAllowed('https://app.example/cb/x?y=1', list)).toBe(true);
    expect(redirectAllowed('https://app.example/cbx', list)).toBe(false);
    expect(redirectAllowed('http://localhost/app#x', list)).toBe(false);
    expect(redirectAllowed('https://app.example/cb/\\evil', list)).toBe(false);
    expect(redirectAllowed('https://app.example/cb/' + 'x'.repeat(3000), list)).toBe(false);
    expect(redirectAllowed('http://localhost/app', [])).toBe(false);
    expect(redirectAllowed('https://app.example/cb/../../evil', list)).toBe(false);
    expect(redirectAllowed('https://app.example/cb/%2e%2e/evil', list)).toBe(false);
  });
});
