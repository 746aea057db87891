/**
 * The admin's session: kept in sessionStorage (per tab, gone when the tab closes), never in a
 * cookie, so there is no ambient credential for a cross-site request to ride on (issue #12).
 */
export interface Session {
  readonly accessToken: string;
  readonly refreshToken: string;
  readonly table: string;
  readonly email: string;
}

const KEY = 'tablebase.dashboard.session';
const listeners = new Set<() => void>();

function load(): Session | null {
  try {
    const raw = sessionStorage.getItem(KEY);
    return raw ? (JSON.parse(raw) as Session) : null;
  } catch {
    return null;
  }
}

let current: Session | null = load();

export function getSession(): Session | null {
  return current;
}

export function setSession(next: Session | null): void {
  current = next;
  try {
    if (next) sessionStorage.setItem(KEY, JSON.stringify(next));
    else sessionStorage.removeItem(KEY);
  } catch {
    // Storage refused (private mode): the session lives in memory only.
  }
  for (const l of listeners) l();
}

export function onSessionChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
