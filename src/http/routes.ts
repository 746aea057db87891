/**
 * THE route table: every route the server answers, on one screen, in the seed's order. The
 * OpenAPI document is generated from this table and the project, and a test fails when a route
 * here is missing from the document.
 */
import type { RequestContext } from './context.js';
import { dataRoutes } from './routes/data.js';
import { streamRoutes } from './routes/stream.js';
import type { DeclaredRoute } from './declare.js';
import { runRoute } from './lifecycle.js';
import { dashboardRoutes } from './routes/dashboard.js';
import { emailRoutes } from './routes/email.js';
import { systemRoutes } from './routes/system.js';
import { photoRoutes } from './routes/photos.js';
import { confirm, logout, refresh, resetPassword, signIn, signUp, verifyEmail } from '../auth/routes.js';

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
  Object.freeze({ method: route.method, path: route.path, group: route.family, summary: route.summary, declared: route, handler: (ctx: RequestContext) => runRoute(route, ctx, ctx.services) });

/** Every route, in one list. Pure: the CLI reads it without opening a database. */
export function routeTable(extra: readonly Route[] = []): Route[] {
  const entries: (Route | DeclaredRoute)[] = [
    ...dataRoutes,
    ...streamRoutes,
    ...photoRoutes,
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
    ...systemRoutes,
  ];
  return entries.map((e) => ('declaration' in e ? d(e) : e));
}
