/**
 * Client-side routes on the History API: every screen has its own URL under /_/, so deep links,
 * reloads and the back button work (docs/reference/dashboard.md Frame).
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
  /** A segment held a bad percent-escape (`/_/tables/%E0%A4%A`): the app shows its not-found screen. */
  readonly malformed: boolean;
}

/** `decodeURIComponent` throws URIError on a bad escape, which left the whole app blank (docs/reference/dashboard.md). */
function decodePart(part: string): string | undefined {
  try {
    return decodeURIComponent(part);
  } catch {
    return undefined;
  }
}

function read(): Location {
  const rest = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : '';
  const decoded = rest.split('/').filter(Boolean).map(decodePart);
  const malformed = decoded.includes(undefined);
  let query: URLSearchParams;
  try {
    query = new URLSearchParams(location.search);
  } catch {
    query = new URLSearchParams();
  }
  return { parts: malformed ? [] : (decoded as string[]), query, malformed };
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
