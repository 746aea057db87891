/**
 * Matching a path and method against the route table. Static paths are one Map lookup; the few
 * parameterized ones (`/db/custom/:name`, `/img/:id`) are matched segment by segment, and a tail
 * wildcard `:name*` as the last segment takes the rest of the path, one or more segments
 * (`/_/:path*` answers every dashboard screen and asset). Static paths win over patterns, and
 * patterns are tried in declaration order. A known path with another method is 405 with `Allow`
 * (docs/reference/conventions.md). router.case.test.ts is the table of cases.
 */
import { ApiError } from '../core/errors.js';
import type { Route } from './routes.js';

interface Match {
  route: Route;
  params: Record<string, string>;
}

export class Router {
  #static = new Map<string, Map<string, Route>>();
  #patterns: { parts: string[]; tail: string | undefined; methods: Map<string, Route> }[] = [];
  readonly routes: readonly Route[];

  constructor(routes: readonly Route[]) {
    this.routes = routes;
    for (const r of routes) {
      if (r.path.includes(':')) {
        const parts = r.path.split('/');
        const last = parts[parts.length - 1]!;
        const tail = last.startsWith(':') && last.endsWith('*') ? last.slice(1, -1) : undefined;
        if (tail !== undefined) parts.pop();
        let entry = this.#patterns.find((p) => p.parts.join('/') === parts.join('/') && p.tail === tail);
        if (!entry) this.#patterns.push((entry = { parts, tail, methods: new Map() }));
        entry.methods.set(r.method, r);
      } else {
        let m = this.#static.get(r.path);
        if (!m) this.#static.set(r.path, (m = new Map()));
        m.set(r.method, r);
      }
    }
  }

  /** The route for (method, path); null for an unknown path; throws 405 for a wrong method. */
  match(method: string, path: string): Match | null {
    let methods = this.#static.get(path);
    let params: Record<string, string> = {};
    if (!methods) {
      const segs = path.split('/');
      for (const p of this.#patterns) {
        if (p.tail === undefined ? p.parts.length !== segs.length : segs.length <= p.parts.length) continue;
        const got: Record<string, string> = {};
        let ok = true;
        for (let i = 0; i < p.parts.length && ok; i++) {
          const part = p.parts[i]!;
          if (part.startsWith(':')) {
            if (!segs[i]) ok = false;
            else got[part.slice(1)] = decodeURIComponentSafe(segs[i]!);
          } else ok = part === segs[i];
        }
        if (ok && p.tail !== undefined) {
          const rest = segs.slice(p.parts.length);
          // Every segment of the tail must be non-empty: `/_/a//b` and `/_/a/` are not paths of ours.
          if (rest.some((x) => x === '')) ok = false;
          else got[p.tail] = rest.map(decodeURIComponentSafe).join('/');
        }
        if (ok) {
          methods = p.methods;
          params = got;
          break;
        }
      }
    }
    if (!methods) return null;
    const route = methods.get(method) ?? (method === 'HEAD' ? methods.get('GET') : undefined);
    if (!route) throw new ApiError('METHOD_NOT_ALLOWED', undefined, { headers: { Allow: [...methods.keys()].join(', ') } });
    return { route, params };
  }
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
