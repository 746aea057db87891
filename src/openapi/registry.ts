/**
 * Every route SPEC describes, keyed by (method, path) exactly as the route table spells it. A
 * route the table serves but this registry does not know still gets a minimal operation (so the
 * served document always lists it) marked `x-tablebase-generic`; `undocumentedRoutes` reports
 * those, and the tests fail on them, so a new route cannot ship without its description.
 */
import type { DeclaredRoute } from '../http/declare.js';
import { authRoutes } from './auth-paths.js';
import { openApiPath, routeKey, schemaRef, type OperationObject, type RouteDoc } from './context.js';
import { dataRoutes } from './data-paths.js';
import { photoRoutes } from './photo-paths.js';
import { systemRoutes } from './system-paths.js';

export const GENERIC_MARK = 'x-tablebase-generic';

/** What the generator needs of a route: the route table's `Route` without its handler. */
export interface RouteInfo {
  readonly method: string;
  readonly path: string;
  readonly group?: string;
  readonly summary?: string;
  /** Set for declared routes: the document comes from the declaration. */
  readonly declared?: DeclaredRoute;
}

export const ROUTE_DOCS: readonly RouteDoc[] = Object.freeze([...dataRoutes, ...authRoutes, ...photoRoutes, ...systemRoutes]);

const BY_KEY: ReadonlyMap<string, RouteDoc> = new Map(ROUTE_DOCS.map((d) => [routeKey(d.method, d.path), d]));

export function routeDoc(method: string, path: string): RouteDoc | undefined {
  return BY_KEY.get(routeKey(method, path));
}

/** Every route of SPEC, as route-table entries: what `tablebase openapi` documents without a server. */
export function specRoutes(): RouteInfo[] {
  return ROUTE_DOCS.map((d) => ({ method: d.method, path: d.path, group: d.group, summary: d.summary }));
}

/** A route list with `extra` entries added where (method, path) is not already present. */
export function mergeRoutes(routes: readonly RouteInfo[], extra: readonly RouteInfo[]): RouteInfo[] {
  const seen = new Set(routes.map((r) => routeKey(r.method, r.path)));
  return [...routes, ...extra.filter((r) => !seen.has(routeKey(r.method, r.path)))];
}

/** A minimal, valid operation for a route the registry does not know. */
export function genericOperation(route: RouteInfo): OperationObject {
  const params = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
  const op: OperationObject = {
    [GENERIC_MARK]: true,
    description: 'Described from the route table only.',
    responses: {
      '200': { description: 'OK', content: { 'application/json': { schema: { type: 'object' } } } },
      default: { description: 'An error', content: { 'application/json': { schema: schemaRef('Error') } } },
    },
  };
  if (params.length) op.parameters = params;
  if (route.method !== 'GET') op.requestBody = { required: false, content: { 'application/json': { schema: { type: 'object' } } } };
  return op;
}

/** Routes the document lacks, or lists only generically. */
export function undocumentedRoutes(doc: { paths?: Record<string, Record<string, unknown>> }, routes: readonly RouteInfo[]): RouteInfo[] {
  return routes.filter((r) => {
    const op = doc.paths?.[openApiPath(r.path)]?.[r.method.toLowerCase()] as Record<string, unknown> | undefined;
    return !op || op[GENERIC_MARK] === true;
  });
}
