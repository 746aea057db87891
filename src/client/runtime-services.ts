/**
 * The non-table parts of the generated client's runtime: auth (SPEC §8), photos (§10), email and
 * health (§11). Copied verbatim into the generated file after runtime.ts; the generator drops
 * the import line below, which only exists so this file type-checks on its own.
 */
import type { Transport } from './runtime.js';

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
  /** Signs up and keeps the new tokens in the client. */
  signUp<T extends keyof A & string>(input: { table: T; email: string; password: string; object?: A[T]['signUp'] }): Promise<AuthSession<A[T]['row']>>;
  /** Signs in and keeps the tokens in the client. */
  signIn<T extends keyof A & string>(input: { table: T; email: string; password: string }): Promise<AuthSession<A[T]['row']>>;
  /** Rotates the refresh token (default: the last one this client received) and keeps the new pair. */
  refresh(refreshToken?: string): Promise<AuthSession<A[keyof A]['row']>>;
  /** Revokes the session of the current token and forgets the tokens. */
  logout(): Promise<void>;
  verifyEmail(input: { table: keyof A & string; email: string }): Promise<void>;
  confirmEmail(token: string): Promise<void>;
  resetPassword(input: { table: keyof A & string; email: string }): Promise<void>;
  confirmPasswordReset(token: string, newPassword: string): Promise<void>;
}

export function authClient<A extends { [table: string]: AuthShape }>(t: Transport): AuthClient<A> {
  const keep = async <S extends { accessToken: string; refreshToken: string }>(answer: Promise<S>): Promise<S> => {
    const session = await answer;
    t.setToken(session.accessToken);
    t.refreshToken = session.refreshToken;
    return session;
  };
  return {
    signUp: (input) => keep(t.request('POST', '/auth/sign-up', { type: 'signUp', ...input })),
    signIn: (input) => keep(t.request('POST', '/auth/sign-in', { type: 'signIn', ...input })),
    refresh: async (refreshToken) => {
      const token = refreshToken ?? t.refreshToken;
      if (!token) throw new Error('No refresh token: sign in first or pass one');
      return keep(t.request('POST', '/auth/refresh', { refreshToken: token }));
    },
    logout: async () => {
      await t.request('POST', '/auth/logout');
      t.setToken(null);
      t.refreshToken = null;
    },
    verifyEmail: (input) => t.request('POST', '/auth/verify-email', input),
    confirmEmail: (token) => t.request('POST', '/auth/confirm', { type: 'confirmVerifyEmail', token }),
    resetPassword: (input) => t.request('POST', '/auth/reset-password', { type: 'sendResetPassword', ...input }),
    confirmPasswordReset: (token, newPassword) => t.request('POST', '/auth/confirm', { type: 'confirmResetPassword', token, newPassword }),
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
  /** Replaces the access token sent as `Authorization: Bearer` (null: none). */
  setToken(token: string | null): void;
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
