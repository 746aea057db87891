/**
 * OAuth 2.0 / OpenID Connect providers (docs/reference/auth.md), built on `openid-client` (v6; RFC 6749, RFC
 * 7636 PKCE, OpenID Connect Core): the library does the protocol — authorization URL, code
 * exchange, ID-token validation against the issuer's JWKS (`iss`, `aud`, `exp`, `nonce`), userinfo.
 * This file only turns a project's provider entry into an `openid-client` Configuration and reads
 * the identity (subject, email, whether the provider verified it) from the result.
 *
 * Presets: generic OIDC by issuer URL (discovery), Google, Microsoft (a tenant's v2.0 issuer),
 * Apple (the client secret is an ES256 JWT signed with the team's key, made fresh for each
 * exchange) and GitHub (plain OAuth 2.0 — no ID token — plus the user and emails APIs; only the
 * verified primary email counts).
 *
 * Plain-http issuers: openid-client refuses them, rightly. Its documented escape hatch
 * `allowInsecureRequests` is applied only when the issuer (or a replaced endpoint) is http on a
 * loopback address, i.e. the test provider inside the test run — never for a remote host.
 */
import * as client from 'openid-client';
import { importPKCS8, SignJWT } from 'jose';
import type { OAuthProviderOptions } from '../../define/signin.js';
import { sharedPromise } from '../../core/shared-promise.js';

export interface Identity {
  readonly subject: string;
  readonly email: string | null;
  readonly emailVerified: boolean;
}

export interface ProviderFlow {
  /** OpenID Connect (ID token + nonce) or plain OAuth 2.0 with a user API (GitHub). */
  readonly oidc: boolean;
  readonly scopes: string;
  /** Extra authorization-request parameters (Apple: `response_mode`). */
  readonly authParams: Record<string, string>;
  config(): Promise<client.Configuration>;
  /** A second way to authenticate the client, tried once when the token endpoint answers `invalid_client`. */
  fallbackConfig?(): Promise<client.Configuration>;
  /** After the code exchange: who signed in. */
  identity(config: client.Configuration, tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers): Promise<Identity>;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** True for an http URL on a loopback address: the only case plain http is allowed (tests). */
export function isLoopbackHttp(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' && LOOPBACK.has(u.hostname);
  } catch {
    return false;
  }
}

const HTTP_TIMEOUT_SECONDS = 10;

type TokenAuth = 'client_secret_basic' | 'client_secret_post';

function clientAuth(secret: string | undefined, method: TokenAuth): client.ClientAuth {
  if (secret === undefined) return client.None();
  return method === 'client_secret_post' ? client.ClientSecretPost(secret) : client.ClientSecretBasic(secret);
}

/** Discovery once per provider; a failure is retried on the next sign-in instead of cached. */
function discovered(issuer: string, clientId: string, secret: string | undefined, method: TokenAuth = 'client_secret_basic'): () => Promise<client.Configuration> {
  return sharedPromise(() =>
    client
      // client_secret_basic by default: the method every server must support (RFC 6749 §2.3.1) and the OIDC default.
      .discovery(new URL(issuer), clientId, secret, clientAuth(secret, method), {
        execute: isLoopbackHttp(issuer) ? [client.allowInsecureRequests] : [],
        timeout: HTTP_TIMEOUT_SECONDS,
      }),
  );
}

const truthy = (v: unknown): boolean => v === true || v === 'true';

/** Subject and email from the ID token, then from userinfo when the token lacks the email (RFC: claims may live in either). */
async function oidcIdentity(config: client.Configuration, tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers): Promise<Identity> {
  const claims = tokens.claims();
  if (!claims) throw new Error('no ID token');
  let email = typeof claims.email === 'string' ? claims.email : null;
  let verified = truthy(claims.email_verified);
  if (email === null && config.serverMetadata().userinfo_endpoint) {
    const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
    email = typeof info.email === 'string' ? info.email : null;
    verified = truthy(info.email_verified);
  }
  return { subject: claims.sub, email, emailVerified: email !== null && verified };
}

function oidcFlow(issuer: string, o: { clientId: string; clientSecret?: string; scopes?: string[]; tokenAuthMethod?: TokenAuth }): ProviderFlow {
  const config = discovered(issuer, o.clientId, o.clientSecret, o.tokenAuthMethod);
  const flow: ProviderFlow = { oidc: true, scopes: (o.scopes ?? ['openid', 'email', 'profile']).join(' '), authParams: {}, config, identity: oidcIdentity };
  // Clients registered for client_secret_post refuse basic with `invalid_client` (before the code is spent).
  if (o.tokenAuthMethod === undefined && o.clientSecret !== undefined) {
    flow.fallbackConfig = async () => {
      const c = new client.Configuration((await config()).serverMetadata(), o.clientId, o.clientSecret, client.ClientSecretPost(o.clientSecret));
      if (isLoopbackHttp(issuer)) client.allowInsecureRequests(c);
      c.timeout = HTTP_TIMEOUT_SECONDS;
      return c;
    };
  }
  return flow;
}

/** Apple's client secret: an ES256 JWT (iss team, sub client, aud appleid.apple.com), valid 5 minutes. */
export async function appleClientSecret(o: { clientId: string; teamId: string; keyId: string; privateKey: string }, now = Date.now()): Promise<string> {
  const key = await importPKCS8(o.privateKey, 'ES256');
  const iat = Math.floor(now / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: o.keyId })
    .setIssuer(o.teamId)
    .setSubject(o.clientId)
    .setAudience('https://appleid.apple.com')
    .setIssuedAt(iat)
    .setExpirationTime(iat + 300)
    .sign(key);
}

function githubFlow(o: Extract<OAuthProviderOptions, { type: 'github' }>): ProviderFlow {
  const e = o.endpoints ?? {};
  const authorization = e.authorization ?? 'https://github.com/login/oauth/authorize';
  const token = e.token ?? 'https://github.com/login/oauth/access_token';
  const userUrl = e.user ?? 'https://api.github.com/user';
  const emailsUrl = e.emails ?? 'https://api.github.com/user/emails';
  const allowed = [authorization, token, userUrl, emailsUrl].every((u) => u.startsWith('https:') || isLoopbackHttp(u));
  if (!allowed) throw new Error(`oauth provider: GitHub endpoints must be https (or http on loopback for tests)`);
  const config = new client.Configuration({ issuer: 'https://github.com', authorization_endpoint: authorization, token_endpoint: token }, o.clientId, o.clientSecret);
  if ([authorization, token, userUrl, emailsUrl].some(isLoopbackHttp)) client.allowInsecureRequests(config);
  config.timeout = HTTP_TIMEOUT_SECONDS;
  const get = async (url: string, accessToken: string): Promise<unknown> => {
    const res = await client.fetchProtectedResource(config, accessToken, new URL(url), 'GET', undefined, new Headers({ accept: 'application/vnd.github+json', 'user-agent': 'tablebase' }));
    if (!res.ok) throw new Error(`GitHub API answered ${res.status}`);
    return res.json();
  };
  return {
    oidc: false,
    scopes: (o.scopes ?? ['read:user', 'user:email']).join(' '),
    authParams: {},
    config: async () => config,
    async identity(_config, tokens) {
      const user = (await get(userUrl, tokens.access_token)) as { id?: unknown };
      if (typeof user?.id !== 'number' && typeof user?.id !== 'string') throw new Error('GitHub user without id');
      const emails = (await get(emailsUrl, tokens.access_token)) as { email?: unknown; primary?: unknown; verified?: unknown }[];
      // Only the verified primary address (docs/reference/auth.md); anything else is not proof of ownership.
      const primary = Array.isArray(emails) ? emails.find((m) => m?.primary === true && m?.verified === true && typeof m.email === 'string') : undefined;
      return { subject: String(user.id), email: primary ? String(primary.email) : null, emailVerified: primary !== undefined };
    },
  };
}

function appleFlow(o: Extract<OAuthProviderOptions, { type: 'apple' }>): ProviderFlow {
  const base = discovered('https://appleid.apple.com', o.clientId, 'unused');
  return {
    oidc: true,
    // Apple sends the email only when asked, and then only by form_post.
    scopes: (o.scopes ?? ['openid', 'email']).join(' '),
    authParams: { response_mode: 'form_post' },
    // The secret expires, so each exchange gets a configuration with a fresh one.
    config: async () => new client.Configuration((await base()).serverMetadata(), o.clientId, await appleClientSecret(o)),
    identity: oidcIdentity,
  };
}

/** The flow for one provider entry of an auth table (checked at start). */
export function providerFlow(name: string, o: OAuthProviderOptions): ProviderFlow {
  if (!/^[a-z0-9][a-z0-9_-]{0,31}$/.test(name)) throw new Error(`oauth provider "${name}": names are 1-32 of [a-z0-9_-]`);
  if (typeof o?.clientId !== 'string' || o.clientId === '') throw new Error(`oauth provider "${name}": clientId is required`);
  switch (o.type) {
    case 'oidc':
      if (!o.issuer?.startsWith('https://') && !isLoopbackHttp(o.issuer ?? '')) throw new Error(`oauth provider "${name}": issuer must be an https URL`);
      return oidcFlow(o.issuer, o);
    case 'google':
      return oidcFlow('https://accounts.google.com', o);
    case 'microsoft':
      if (!/^[A-Za-z0-9.-]{1,64}$/.test(o.tenant ?? '')) throw new Error(`oauth provider "${name}": tenant must be the directory id`);
      return oidcFlow(`https://login.microsoftonline.com/${o.tenant}/v2.0`, o);
    case 'apple':
      return appleFlow(o);
    case 'github':
      return githubFlow(o);
    default:
      throw new Error(`oauth provider "${name}": unknown type ${JSON.stringify((o as { type?: unknown }).type)}`);
  }
}
