/**
 * The passwordless and federated sign-in options of an auth table (docs/reference/auth.md): one-time codes by
 * email (`otp`), magic links (`magicLink`) and OAuth 2.0 / OpenID Connect providers (`oauth`,
 * keyed by the provider name used in `/auth/oauth/{provider}/start`). Plain data: the server
 * (src/auth/oauth/) turns a provider entry into a client.
 */

/** How a user signed in; the third argument of `onSignIn` / `onSignUp`. */
export type SignInMethod = 'password' | 'otp' | 'magicLink' | 'oauth';

export interface SignInInfo {
  method: SignInMethod;
  /** The provider name for `oauth`. */
  provider?: string;
}

export interface OtpOptions {
  /** An unknown address gets a code too, and verifying it creates the row (when `canSignUp` allows). */
  signUp?: boolean;
}

/** Endpoints that replace a preset's (tests, private identity servers). */
export interface OAuthEndpoints {
  authorization?: string;
  token?: string;
  /** GitHub: the user API (`https://api.github.com/user`). */
  user?: string;
  /** GitHub: the emails API (`https://api.github.com/user/emails`). */
  emails?: string;
}

interface ProviderBase {
  clientId: string;
  /** Scopes asked for; each preset has sensible defaults (`openid email profile`, GitHub `read:user user:email`). */
  scopes?: string[];
  /**
   * The callback URL registered at the provider. Default: `<auth.publicUrl or http://<Host>>/auth/oauth/<name>/callback`.
   */
  redirectUri?: string;
  /** Create a row for a new identity (still subject to `canSignUp`). Default true. */
  signUp?: boolean;
}

/** Any OpenID Connect provider, found by discovery (`<issuer>/.well-known/openid-configuration`). */
export interface OidcProviderOptions extends ProviderBase {
  type: 'oidc';
  issuer: string;
  clientSecret?: string;
  /**
   * How the client authenticates at the token endpoint. Default: `client_secret_basic` (the
   * OpenID Connect default), retried once with `client_secret_post` when the server answers
   * `invalid_client`.
   */
  tokenAuthMethod?: 'client_secret_basic' | 'client_secret_post';
}

export interface GoogleProviderOptions extends ProviderBase {
  type: 'google';
  clientSecret: string;
}

export interface MicrosoftProviderOptions extends ProviderBase {
  type: 'microsoft';
  clientSecret: string;
  /** The directory (tenant) id; the ID token's issuer names it, so it must be a real tenant id. */
  tenant: string;
}

/** Sign in with Apple: the client secret is an ES256 JWT the server signs with the `.p8` key. */
export interface AppleProviderOptions extends ProviderBase {
  type: 'apple';
  /** The Services ID. */
  clientId: string;
  teamId: string;
  keyId: string;
  /** The PKCS#8 PEM text of the `.p8` key. */
  privateKey: string;
}

/** GitHub: plain OAuth 2.0 plus the user and emails APIs; only a verified primary email is used. */
export interface GitHubProviderOptions extends ProviderBase {
  type: 'github';
  clientSecret: string;
  endpoints?: OAuthEndpoints;
}

export type OAuthProviderOptions = OidcProviderOptions | GoogleProviderOptions | MicrosoftProviderOptions | AppleProviderOptions | GitHubProviderOptions;

/** The sign-in options an auth table may add to `authTable(...)`. */
export interface SignInOptions {
  otp?: OtpOptions | boolean;
  magicLink?: boolean;
  oauth?: Record<string, OAuthProviderOptions>;
}
