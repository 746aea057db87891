/**
 * THE route table: every route the server answers, on one screen, in the seed's order. The
 * OpenAPI document is generated from this table and the project, and a test fails when a route
 * here is missing from the document.
 */
import type { RequestContext } from './context.js';
import { dataRoute } from './data-routes.js';
import type { DeclaredRoute } from './declare.js';
import { runRoute } from './lifecycle.js';
import { dashboardRoutes } from './routes/dashboard.js';
import { emailRoutes } from './routes/email.js';
import { healthRoute } from './routes/system.js';
import { streamRoute } from './stream-routes.js';
import { deletePhoto, servePhoto, uploadPhoto } from './photo-routes.js';
import { confirm, logout, refresh, resetPassword, signIn, signUp, verifyEmail } from '../auth/routes.js';
import { swaggerJson, swaggerYaml } from '../openapi/routes.js';

export type RouteHandler = (ctx: RequestContext) => Promise<void> | void;

export type RouteGroup = DeclaredRoute['family'];

export interface Route {
  readonly method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  readonly path: string;
  readonly group: RouteGroup;
  readonly summary: string;
  readonly handler: RouteHandler;
  /** The declaration the route was made from (http/declare.ts); documented and validated from it. */
  readonly declared?: DeclaredRoute;
}

const r = (method: Route['method'], path: string, group: RouteGroup, summary: string, handler: RouteHandler): Route => Object.freeze({ method, path, group, summary, handler });

/** A declared route in the table: the lifecycle of http/lifecycle.ts runs it. */
const d = (route: DeclaredRoute): Route =>
  Object.freeze({ method: route.method, path: route.path, group: route.family, summary: route.summary, declared: route, handler: (ctx: RequestContext) => runRoute(route, ctx, ctx.app) });

/** Every route, in one list. Pure: the CLI reads it without opening a database. */
export function routeTable(extra: readonly Route[] = []): Route[] {
  const entries: (Route | DeclaredRoute)[] = [
    r('GET', '/db', 'data', 'Get the first row matching `where`', dataRoute('get')),
    r('GET', '/db/list', 'data', 'List rows with `items` and `total`', dataRoute('list')),
    r('GET', '/db/count', 'data', 'Count matching rows', dataRoute('count')),
    r('POST', '/db', 'data', 'Create a row', dataRoute('create')),
    r('POST', '/db/many', 'data', 'Create rows in one transaction', dataRoute('createMany')),
    r('PATCH', '/db', 'data', 'Update the first matching row', dataRoute('update')),
    r('PATCH', '/db/many', 'data', 'Update matching rows', dataRoute('updateMany')),
    r('DELETE', '/db', 'data', 'Delete the first matching row', dataRoute('delete')),
    r('DELETE', '/db/many', 'data', 'Delete matching rows', dataRoute('deleteMany')),
    r('PATCH', '/db/custom/:name', 'data', 'Run a custom operation', dataRoute('custom')),
    r('PATCH', '/db/custom/:name/many', 'data', 'Run a custom operation on many rows', dataRoute('customMany')),
    r('GET', '/db/stream', 'stream', 'Stream the first row matching `where`', streamRoute('one', 'streamOne')),
    r('GET', '/db/stream/list', 'stream', 'Stream a page of rows with its total', streamRoute('list', 'streamList')),
    r('GET', '/db/stream/count', 'stream', 'Stream the count of matching rows', streamRoute('count', 'streamCount')),
    r('POST', '/img', 'photos', 'Upload a photo (multipart field `file`, or a raw image body)', uploadPhoto),
    r('GET', '/img/:id', 'photos', 'Serve a photo, or a thumbnail with ?thumb=WxH', servePhoto),
    r('DELETE', '/img/:id', 'photos', 'Delete a photo and its thumbnails', deletePhoto),
    r('POST', '/auth/sign-up', 'auth', 'Create an account and sign in', signUp),
    r('POST', '/auth/sign-in', 'auth', 'Sign in with email and password', signIn),
    r('POST', '/auth/verify-email', 'auth', 'Send (or resend) the verification email', verifyEmail),
    r('POST', '/auth/confirm', 'auth', 'Confirm an email verification or a password reset', confirm),
    r('POST', '/auth/reset-password', 'auth', 'Send a password-reset email', resetPassword),
    r('POST', '/auth/refresh', 'auth', 'Rotate a refresh token for a new token pair', refresh),
    r('POST', '/auth/logout', 'auth', 'End the session of the bearer token', logout),
    ...dashboardRoutes,
    ...emailRoutes,
    ...extra,
    r('GET', '/swagger.json', 'system', 'This OpenAPI document as JSON', swaggerJson),
    r('GET', '/swagger.yaml', 'system', 'This OpenAPI document as YAML', swaggerYaml),
    healthRoute,
  ];
  return entries.map((e) => ('declaration' in e ? d(e) : e));
}
