/**
 * The dashboard's one way to talk to the server: same origin only, the admin token in the
 * Authorization header, GET bodies in `?body=` (docs/reference/conventions.md). An expired access token is refreshed
 * once; a refused refresh ends the session.
 */
import { getSession, setSession } from './session';

export interface ErrorDetail {
  readonly path: string;
  readonly message: string;
}

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: readonly ErrorDetail[] = [],
  ) {
    super(message);
  }
}

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

async function send(method: Method, path: string, body: unknown, token: string | undefined): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  let url = path;
  let payload: string | undefined;
  if (body !== undefined) {
    if (method === 'GET') url += `${path.includes('?') ? '&' : '?'}body=${encodeURIComponent(JSON.stringify(body))}`;
    else {
      payload = JSON.stringify(body);
      headers['content-type'] = 'application/json';
    }
  }
  return fetch(url, { method, headers, body: payload, credentials: 'omit', cache: 'no-store' });
}

async function failure(res: Response): Promise<ApiFailure> {
  try {
    const j = (await res.json()) as { error?: { code?: string; message?: string; details?: ErrorDetail[] } };
    return new ApiFailure(res.status, j.error?.code ?? 'ERROR', j.error?.message ?? res.statusText, j.error?.details ?? []);
  } catch {
    return new ApiFailure(res.status, 'ERROR', res.statusText || `HTTP ${res.status}`);
  }
}

let refreshing: Promise<boolean> | null = null;

/** One refresh at a time, shared by every call that saw the 401. */
function refresh(): Promise<boolean> {
  const s = getSession();
  if (!s) return Promise.resolve(false);
  refreshing ??= (async () => {
    try {
      const res = await send('POST', '/auth/refresh', { refreshToken: s.refreshToken }, undefined);
      if (!res.ok) return false;
      const { data } = (await res.json()) as { data: { accessToken: string; refreshToken: string } };
      setSession({ ...s, accessToken: data.accessToken, refreshToken: data.refreshToken });
      return true;
    } catch {
      return false;
    } finally {
      refreshing = null;
    }
  })();
  return refreshing;
}

/** Calls the API; answers `data` (undefined for 204) or throws ApiFailure. */
export async function api<T = unknown>(method: Method, path: string, body?: unknown): Promise<T> {
  let res = await send(method, path, body, getSession()?.accessToken);
  if (res.status === 401 && getSession()) {
    if (await refresh()) res = await send(method, path, body, getSession()?.accessToken);
    if (res.status === 401) {
      setSession(null);
      throw await failure(res);
    }
  }
  if (!res.ok) throw await failure(res);
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  return (text ? (JSON.parse(text) as { data: T }).data : undefined) as T;
}

/** Fetches an image with the admin token and answers an object URL (CSP allows blob: images). */
export async function imageUrl(path: string): Promise<string> {
  const res = await send('GET', path, undefined, getSession()?.accessToken);
  if (!res.ok) throw await failure(res);
  return URL.createObjectURL(await res.blob());
}

/** Signs in against an admin auth table; a non-admin account is refused and its session ended. */
export async function signIn(table: string, email: string, password: string): Promise<void> {
  const res = await send('POST', '/auth/sign-in', { type: 'signIn', table, email, password }, undefined);
  if (!res.ok) throw await failure(res);
  const { data } = (await res.json()) as { data: { accessToken: string; refreshToken: string } };
  // The claims are read without verifying them: the server verifies every call anyway.
  const claims = JSON.parse(atob((data.accessToken.split('.')[1] ?? '').replace(/-/g, '+').replace(/_/g, '/'))) as { admin?: { isAdmin?: boolean } };
  if (claims.admin?.isAdmin !== true) {
    await send('POST', '/auth/logout', {}, data.accessToken).catch(() => undefined);
    throw new ApiFailure(403, 'FORBIDDEN', 'This account is not an admin');
  }
  setSession({ accessToken: data.accessToken, refreshToken: data.refreshToken, table, email });
}

/** Revokes the session on the server, then forgets it here whatever the answer. */
export async function signOut(): Promise<void> {
  const s = getSession();
  if (s) await send('POST', '/auth/logout', {}, s.accessToken).catch(() => undefined);
  setSession(null);
}

/** POST /auth/confirm for the link page (no admin session): the confirmation an email link carries. */
export async function confirmToken(type: string, token: string, newPassword?: string): Promise<void> {
  const res = await send('POST', '/auth/confirm', { type, token, ...(newPassword === undefined ? {} : { newPassword }) }, undefined);
  if (!res.ok) throw await failure(res);
}
