/**
 * The OAuth / OpenID Connect sign-in flow (docs/reference/auth.md) as a service: `start` answers the provider's
 * authorization URL (state, PKCE S256, nonce for OIDC), `callback` exchanges the code and answers
 * where to send the browser — `redirectTo` with the token pair in the fragment, or with
 * `#error=<code>`, never a token on failure.
 *
 * Who signed in: by (provider, subject) in `_oauth_identities`; else the row with the same email,
 * linked only when the provider says it verified that email (an unverified claim could take over
 * an account); else a new row, if the provider entry allows sign-up and `canSignUp` does.
 */
import * as client from 'openid-client';
import { ApiError, type ErrorCode } from '../../core/errors.js';
import type { CollectionModel } from '../../core/model.js';
import type { OAuthProviderOptions } from '../../define/signin.js';
import type { Row } from '../../storage/plan.js';
import { normalizeEmail } from '../../pipeline/plan/values.js';
import { completeSignIn, createVerifiedUser, mayCreate, type SignInAnswer, type SignInDeps } from '../sign-in.js';
import { findUser } from '../users.js';
import { OAuthIdentities } from './identities.js';
import { providerFlow, type Identity, type ProviderFlow } from './providers.js';
import { OAuthStates } from './states.js';

export interface OAuthSettings {
  /** `auth.redirectAllowList`: exact URLs, or prefixes ending in `*`. */
  readonly redirectAllowList: readonly string[];
  /** `auth.publicUrl`: the origin callback URLs are built on; default `http://<Host>`. */
  readonly publicUrl?: string;
}

const MAX_REDIRECT_LENGTH = 2048;
const HOST_RE = /^[A-Za-z0-9.-]{1,253}(:\d{1,5})?$|^\[[0-9A-Fa-f:.]{2,45}\](:\d{1,5})?$/;

/** True when `url` is allowed by the list (docs/reference/auth.md): exact match, or an entry ending in `*` as a prefix. */
export function redirectAllowed(url: string, allowList: readonly string[]): boolean {
  if (url.length > MAX_REDIRECT_LENGTH || url.includes('#') || /[\s\\]/.test(url)) return false;
  // Only URLs already in normal form: `/cb/../evil` would match a prefix yet land elsewhere.
  try {
    if (new URL(url).href !== url && new URL(url).href !== `${url}/`) return false;
  } catch {
    return false;
  }
  return allowList.some((entry) => (entry.endsWith('*') ? url.startsWith(entry.slice(0, -1)) : url === entry));
}

export type CallbackOutcome = { readonly location: string };

export class OAuthService {
  readonly #flows = new Map<string, Map<string, ProviderFlow>>();
  readonly #d: SignInDeps;
  readonly #settings: OAuthSettings;
  readonly states: OAuthStates;
  readonly identities: OAuthIdentities;

  constructor(d: SignInDeps, settings: OAuthSettings, states: OAuthStates, identities: OAuthIdentities) {
    this.#d = d;
    this.#settings = settings;
    this.states = states;
    this.identities = identities;
    // Every provider entry is checked at start, so a typo fails the server, not a user's sign-in.
    for (const c of d.rt.model.collections.values()) {
      const providers = c.auth?.options.oauth as Record<string, OAuthProviderOptions> | undefined;
      if (!providers) continue;
      const byName = new Map<string, ProviderFlow>();
      for (const [name, o] of Object.entries(providers)) byName.set(name, providerFlow(name, o));
      this.#flows.set(c.name, byName);
    }
  }

  /** The auth table and the provider's flow, or 404 (docs/reference/auth.md: an unknown provider is 404). */
  #provider(table: unknown, provider: string): { c: CollectionModel; flow: ProviderFlow } {
    const c = typeof table === 'string' ? this.#d.rt.model.collections.get(table) : undefined;
    const flow = c?.auth ? this.#flows.get(c.name)?.get(provider) : undefined;
    if (!c || !flow) throw new ApiError('NOT_FOUND', 'No such OAuth provider for this table');
    return { c, flow };
  }

  /** 404 for an unknown provider, 400 for a `redirectTo` outside the allow list; else the authorization URL. */
  async start(input: { provider: string; table: unknown; redirectTo: unknown; host: string | undefined }): Promise<string> {
    const { c, flow } = this.#provider(input.table, input.provider);
    const redirectTo = input.redirectTo;
    if (typeof redirectTo !== 'string' || !redirectAllowed(redirectTo, this.#settings.redirectAllowList)) {
      throw new ApiError('BAD_REQUEST', 'redirectTo is not in the allow list', { details: [{ path: 'query:/redirectTo', message: 'must be listed in auth.redirectAllowList' }] });
    }
    const redirectUri = this.#redirectUri(c, input.provider, input.host);
    const config = await flow.config().catch((err) => {
      this.#d.rt.log.error({ err: { name: err?.name, message: err?.message }, provider: input.provider }, 'oauth discovery failed');
      throw new ApiError('UNAVAILABLE', 'The identity provider cannot be reached');
    });
    const codeVerifier = client.randomPKCECodeVerifier();
    const nonce = flow.oidc ? client.randomNonce() : null;
    const state = await this.states.create({ provider: input.provider, table: c.name, codeVerifier, nonce, redirectUri, redirectTo });
    const params: Record<string, string> = {
      redirect_uri: redirectUri,
      scope: flow.scopes,
      state,
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      ...flow.authParams,
    };
    if (nonce !== null) params.nonce = nonce;
    return client.buildAuthorizationUrl(config, params).href;
  }

  #redirectUri(c: CollectionModel, provider: string, host: string | undefined): string {
    const configured = (c.auth!.options.oauth as Record<string, OAuthProviderOptions>)[provider]!.redirectUri;
    if (configured) return configured;
    let origin = this.#settings.publicUrl;
    if (!origin) {
      if (!host || !HOST_RE.test(host)) throw new ApiError('BAD_REQUEST', 'A valid Host header is required');
      origin = `http://${host}`;
    }
    return `${origin.replace(/\/+$/, '')}/auth/oauth/${provider}/callback`;
  }

  /**
   * The provider's redirect back. 400 INVALID_OAUTH_STATE when the state is unknown (no
   * `redirectTo` can be trusted); otherwise a location: `redirectTo#access_token=…` or `#error=…`.
   */
  async callback(provider: string, query: Record<string, string>): Promise<CallbackOutcome> {
    const found = await this.states.consume(query.state);
    if (found.kind === 'unknown' || (found.kind === 'ok' && found.pending.provider !== provider)) throw new ApiError('INVALID_OAUTH_STATE');
    if (found.kind === 'spent') return { location: withError(found.redirectTo, 'INVALID_OAUTH_STATE') };
    const p = found.pending;
    try {
      const { c, flow } = this.#provider(p.table, provider);
      const identity = await this.#exchange(flow, p, query);
      const answer = await this.#signIn(c, provider, identity);
      const fragment = new URLSearchParams({ access_token: answer.accessToken, refresh_token: answer.refreshToken, expires_in: String(answer.expiresIn), token_type: 'bearer' });
      return { location: `${p.redirectTo}#${fragment}` };
    } catch (err) {
      const code: ErrorCode = err instanceof ApiError ? err.code : 'OAUTH_FAILED';
      if (!(err instanceof ApiError))
        this.#d.rt.log.warn({ err: { name: (err as Error)?.name, message: (err as Error)?.message, code: (err as { code?: unknown })?.code }, provider }, 'oauth callback failed');
      return { location: withError(p.redirectTo, code) };
    }
  }

  async #exchange(flow: ProviderFlow, p: { codeVerifier: string; nonce: string | null; redirectUri: string }, query: Record<string, string>): Promise<Identity> {
    if (query.error !== undefined) throw new ApiError('OAUTH_FAILED', 'The provider refused the sign-in');
    let config = await flow.config();
    const current = new URL(p.redirectUri);
    for (const [k, v] of Object.entries(query)) current.searchParams.set(k, v);
    const checks = { pkceCodeVerifier: p.codeVerifier, expectedState: query.state, ...(p.nonce !== null ? { expectedNonce: p.nonce, idTokenExpected: true } : {}) };
    let tokens;
    try {
      tokens = await client.authorizationCodeGrant(config, current, checks);
    } catch (err) {
      if (!(err instanceof client.ResponseBodyError && err.error === 'invalid_client' && flow.fallbackConfig)) throw err;
      config = await flow.fallbackConfig();
      tokens = await client.authorizationCodeGrant(config, current, checks);
    }
    return flow.identity(config, tokens);
  }

  async #signIn(c: CollectionModel, provider: string, id: Identity): Promise<SignInAnswer> {
    const rt = this.#d.rt;
    const info = { method: 'oauth' as const, provider };
    const linked = await this.identities.find(c.name, provider, id.subject);
    let user: Row | null = linked ? await findUser(rt, c, 'id', linked) : null;
    if (user) return completeSignIn(this.#d, c, user, info, false, false);
    if (linked) await this.identities.forget(c.name, provider, id.subject);
    let email: string | null = null;
    try {
      email = id.email === null ? null : normalizeEmail(id.email, '/email');
    } catch {
      email = null;
    }
    if (email === null) throw new ApiError('OAUTH_FAILED', 'The provider did not share a usable email address');
    user = await findUser(rt, c, 'email', email);
    if (user) {
      // Linking on an email the provider did not verify would let anyone claim any account.
      if (!id.emailVerified) throw new ApiError('CONFLICT', 'An account with this email exists; sign in to it first');
      await this.identities.link(c.name, provider, id.subject, user.id, email);
      return completeSignIn(this.#d, c, user, info, false, true);
    }
    const providerOptions = (c.auth!.options.oauth as Record<string, OAuthProviderOptions>)[provider]!;
    if (providerOptions.signUp === false || !(await mayCreate(c, email))) throw new ApiError('FORBIDDEN', 'Sign-up is closed');
    user = await createVerifiedUser(rt, c, email, id.emailVerified);
    await this.identities.link(c.name, provider, id.subject, user.id, email);
    return completeSignIn(this.#d, c, user, info, true, id.emailVerified);
  }
}

function withError(redirectTo: string, code: ErrorCode): string {
  return `${redirectTo}#${new URLSearchParams({ error: code })}`;
}
