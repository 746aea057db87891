/**
 * The non-table parts of the generated client's runtime: auth (docs/reference/auth.md), photos (docs/reference/photos.md), email and
 * health (docs/reference/dashboard.md). Copied verbatim into the generated file after runtime.ts; the generator drops
 * the import line below, which only exists so this file type-checks on its own.
 */
import { TablebaseError, type StoredSession, type TokenAnswer, type Transport } from './runtime.js';

export interface AuthShape {
  row: object;
  signUp: object;
}

export interface AuthSession<R> {
  user: R;
  accessToken: string;
  refreshToken: string;
  /** Seconds until the access token expires. */
  expiresIn: number;
}

export interface AuthClient<A extends { [table: string]: AuthShape }> {
  /** Signs up and keeps the session in the client's store. */
  signUp<T extends keyof A & string>(input: { table: T; email: string; password: string; object?: A[T]['signUp'] }): Promise<AuthSession<A[T]['row']>>;
  /** Signs in and keeps the session in the client's store. */
  signIn<T extends keyof A & string>(input: { table: T; email: string; password: string }): Promise<AuthSession<A[T]['row']>>;
  /** Rotates the refresh token (default: the stored one) and keeps the new pair. The client also does this by itself. */
  refresh(refreshToken?: string): Promise<AuthSession<A[keyof A]['row']>>;
  /** Revokes the session of the current token (`all`: every session of the user) and forgets it. */
  logout(options?: { all?: boolean }): Promise<void>;
  /** The stored session (null: signed out); survives a reload with the localStorage store. */
  session(): Promise<StoredSession | null>;
  /** Calls `listener` with each new access token, and null on sign-out; answers the unsubscribe. */
  onChange(listener: (accessToken: string | null) => void): () => void;
  verifyEmail(input: { table: keyof A & string; email: string }): Promise<void>;
  confirmEmail(token: string): Promise<void>;
  resetPassword(input: { table: keyof A & string; email: string }): Promise<void>;
  confirmPasswordReset(token: string, newPassword: string): Promise<void>;
  changeEmail(newEmail: string): Promise<void>;
  confirmEmailChange(token: string): Promise<void>;
  /** Emails a 6-digit code (tables with `otp` enabled). */
  sendOtp(input: { table: keyof A & string; email: string }): Promise<void>;
  verifyOtp<T extends keyof A & string>(input: { table: T; email: string; code: string }): Promise<AuthSession<A[T]['row']>>;
  /** Emails a single-use sign-in link (tables with `magicLink` enabled). */
  sendMagicLink(input: { table: keyof A & string; email: string }): Promise<void>;
  confirmMagicLink(token: string): Promise<AuthSession<A[keyof A]['row']>>;
  /** Where to send the browser to sign in with an OAuth provider; it comes back to `redirectTo`. */
  oauthUrl(provider: string, input: { table: keyof A & string; redirectTo: string }): string;
  /**
   * Keeps the session an OAuth sign-in put in the redirect's fragment (`#access_token=…`); answers
   * whether there was one, and throws the `#error=` code when the sign-in failed.
   */
  fromRedirect(hash?: string): Promise<boolean>;
}

export function authClient<A extends { [table: string]: AuthShape }>(t: Transport): AuthClient<A> {
  const keep = async <S extends TokenAnswer>(answer: Promise<S>): Promise<S> => {
    const session = await answer;
    await t.keep(session);
    return session;
  };
  return {
    signUp: (input) => keep(t.request('POST', '/auth/sign-up', { type: 'signUp', ...input })),
    signIn: (input) => keep(t.request('POST', '/auth/sign-in', { type: 'signIn', ...input })),
    refresh: async (refreshToken) => {
      const s = await t.refresh(refreshToken);
      return { user: s.user, accessToken: s.accessToken, refreshToken: s.refreshToken ?? '', expiresIn: Math.max(0, Math.round((s.expiresAt - Date.now()) / 1000)) } as AuthSession<A[keyof A]['row']>;
    },
    logout: async (options) => {
      try {
        await t.request('POST', '/auth/logout', options?.all ? { all: true } : undefined);
      } finally {
        await t.clear();
      }
    },
    session: () => t.session(),
    onChange: (listener) => t.onToken(listener),
    verifyEmail: (input) => t.request('POST', '/auth/verify-email', input),
    confirmEmail: (token) => t.request('POST', '/auth/confirm', { type: 'confirmVerifyEmail', token }),
    resetPassword: (input) => t.request('POST', '/auth/reset-password', { type: 'sendResetPassword', ...input }),
    confirmPasswordReset: (token, newPassword) => t.request('POST', '/auth/confirm', { type: 'confirmResetPassword', token, newPassword }),
    changeEmail: (newEmail) => t.request('POST', '/auth/change-email', { type: 'sendChangeEmail', newEmail }),
    confirmEmailChange: (token) => t.request('POST', '/auth/confirm', { type: 'confirmEmailChange', token }),
    sendOtp: (input) => t.request('POST', '/auth/otp/send', { type: 'sendOtp', ...input }),
    verifyOtp: (input) => keep(t.request('POST', '/auth/otp/verify', { type: 'verifyOtp', ...input })),
    sendMagicLink: (input) => t.request('POST', '/auth/magic-link', { type: 'sendMagicLink', ...input }),
    confirmMagicLink: (token) => keep(t.request('POST', '/auth/confirm', { type: 'confirmMagicLink', token })),
    oauthUrl: (provider, input) => t.url(`/auth/oauth/${encodeURIComponent(provider)}/start`, { table: input.table, redirectTo: input.redirectTo }),
    fromRedirect: async (hash = typeof location === 'object' ? location.hash : '') => {
      const p = new URLSearchParams(hash.replace(/^#/, ''));
      const error = p.get('error');
      if (error) throw new TablebaseError(401, error, `Sign-in failed: ${error}`);
      const accessToken = p.get('access_token');
      if (!accessToken) return false;
      await t.keep({ accessToken, refreshToken: p.get('refresh_token'), expiresIn: Number(p.get('expires_in')) || undefined });
      return true;
    },
  };
}

export interface Photo {
  id: string;
  mimeType: string;
  size: number;
  ownerId: string | null;
  width: number | null;
  height: number | null;
  createdAt: string;
}

export interface Thumb {
  width: number;
  height: number;
}

export interface PhotoClient {
  /** Uploads as multipart form data (one part named `file`). */
  upload(file: Blob, filename?: string): Promise<Photo>;
  /** The URL of a photo or of a thumbnail that fits inside width × height. */
  url(id: string, thumb?: Thumb): string;
  get(id: string, thumb?: Thumb): Promise<Blob>;
  delete(id: string): Promise<void>;
}

const thumbQuery = (thumb?: Thumb) => (thumb ? { thumb: `${thumb.width}x${thumb.height}` } : undefined);

export function photoClient(t: Transport): PhotoClient {
  return {
    upload: (file, filename = 'upload') => {
      const form = new FormData();
      form.append('file', file, filename);
      return t.request('POST', '/img', form);
    },
    url: (id, thumb) => t.url(`/img/${encodeURIComponent(id)}`, thumbQuery(thumb)),
    get: (id, thumb) => t.blob(`/img/${encodeURIComponent(id)}`, thumbQuery(thumb)),
    delete: (id) => t.request('DELETE', `/img/${encodeURIComponent(id)}`),
  };
}

export type EmailMessage =
  { to: string | string[]; template: string; variables?: Record<string, unknown>; subject?: string } | { to: string | string[]; subject: string; text?: string; html?: string };

export interface BaseClient {
  /** Replaces the access token sent as `Authorization: Bearer` (null: none; undefined: the stored session's). */
  setToken(token: string | null | undefined): void;
  /** The current access token. */
  token(): Promise<string | null>;
  health(): Promise<{ status: 'ok' }>;
  photos: PhotoClient;
  email: { send(message: EmailMessage): Promise<{ id: string }> };
}

export function baseClient(t: Transport): BaseClient {
  return {
    setToken: (token) => t.setToken(token),
    token: () => t.token(),
    health: () => t.request('GET', '/health'),
    photos: photoClient(t),
    email: { send: (message) => t.request('POST', '/email', message) },
  };
}
