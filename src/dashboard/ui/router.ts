/**
 * Client-side routes on the History API: every screen has its own URL under /_/, so deep links,
 * reloads and the back button work (SPEC §11a Frame).
 */
import { useEffect, useState } from 'preact/hooks';

export const BASE = '/_';

const listeners = new Set<() => void>();
const notify = () => {
  for (const l of listeners) l();
};
window.addEventListener('popstate', notify);

export function navigate(to: string, replace = false): void {
  if (to === location.pathname + location.search) return;
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  notify();
  window.scrollTo(0, 0);
}

export interface Location {
  /** Path segments after /_/ (`['tables', 'tasks']`). */
  readonly parts: readonly string[];
  readonly query: URLSearchParams;
}

function read(): Location {
  const rest = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : '';
  return { parts: rest.split('/').filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(location.search) };
}

export function useLocation(): Location {
  const [loc, setLoc] = useState(read);
  useEffect(() => {
    const update = () => setLoc(read());
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  return loc;
}

/** A URL under /_/ from path parts and optional query values (empty values dropped). */
export function href(parts: readonly string[], query: Record<string, string | number | undefined> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  const path = parts.length ? `${BASE}/${parts.map(encodeURIComponent).join('/')}` : BASE;
  return `${path}${s ? `?${s}` : ''}`;
}
