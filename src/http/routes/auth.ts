/**
 * The /auth routes (docs/reference/auth.md), through the one lifecycle: the
 * body names an auth table (404 otherwise) → rate limit per auth table and operation → the auth
 * rule → body schema → the auth service (src/auth/flows.ts). Sign-up's document body is the
 * model's per-table SignUpBody (only the table's signUpFields in `object`).
 */
import { Type } from '@sinclair/typebox';
import { confirmEmailChange } from '../../auth/email-change.js';
import { authTableOf } from '../../auth/flows.js';
import { confirmMagicLink } from '../../auth/passwordless.js';
import { ApiError } from '../../core/errors.js';
import { emailForRules } from '../../pipeline/plan/values.js';
import type { RequestStream } from '../../core/sink.js';
import { AUTH_NO_TABLE } from '../../ratelimit/policy.js';
import { readSmallBody } from '../small-body.js';
import { defineRoute, empty, modelSchema, noContent, type EarlyRequest, type RateLimitKey } from '../declare.js';
import type { Services } from '../services.js';

const table = (e: EarlyRequest, s: Services) => authTableOf(s.rt.model, e.body?.table);
/** Step 1 keyed by the auth table the body names. */
const keyed =
  (op: string) =>
  (e: EarlyRequest, s: Services): RateLimitKey => ({ table: table(e, s).name, op });
/** Confirm and refresh name no table; one may be given to key the rate limit, else `auth:<operation>` (docs/reference/auth.md). */
const keyedIfNamed =
  (op: string) =>
  (e: EarlyRequest, s: Services): RateLimitKey =>
    e.body?.table === undefined ? { table: AUTH_NO_TABLE, op } : keyed(op)(e, s);

const AuthTable = Type.String({ 'x-tablebase-model': 'AuthTableName' });
const OptionalTable = Type.Optional(Type.String({ 'x-tablebase-model': 'RateLimitAuthTable' }));
/** Addresses are normalized (trimmed, lowercased) and checked by the service: `/email` details. */
const Email = Type.Unknown({ 'x-tablebase-model': 'Email' });
const Session = modelSchema('AuthSession');

export const authRoutes = [
  defineRoute({
    method: 'POST',
    path: '/auth/sign-up',
    family: 'auth',
    summary: 'Create an account and sign in',
    description:
      'Creates the row with isVerified false. A taken email is 409; fields outside signUpFields are 400; without auth rules (canSignUp) it is 403. A table that is not an auth table is 404.',
    operationId: 'signUp',
    access: 'public',
    rateLimit: keyed('signUp'),
    rule: (_jwt, s, e) => {
      const object = typeof e.body?.object === 'object' && e.body.object !== null ? (e.body.object as Record<string, unknown>) : {};
      return table(e, s).auth!.options.authRules?.canSignUp?.({ email: emailForRules(e.body?.email), object }) ?? false;
    },
    body: Type.Object(
      { type: Type.Literal('signUp'), table: Type.String(), email: Type.Unknown(), password: Type.Unknown(), object: Type.Optional(Type.Unknown()) },
      { additionalProperties: false, 'x-tablebase-model': 'SignUpBody' },
    ),
    responses: { 200: Session },
    errors: ['NOT_FOUND', 'CONFLICT', 'UNAVAILABLE'],
    handler: ({ body }, s) => s.authFlows.signUp(authTableOf(s.rt.model, body.table), body),
  }),
  defineRoute({
    method: 'POST',
    path: '/auth/sign-in',
    family: 'auth',
    summary: 'Sign in with email and password',
    description: 'A wrong password and an unknown email answer the same 401 INVALID_CREDENTIALS. canSignIn may refuse (403).',
    operationId: 'signIn',
    access: 'public',
    rateLimit: keyed('signIn'),
    // Without canSignIn nobody signs in: 403 before the body's shape (docs/reference/rules-and-hooks.md); the rule runs on the user later.
    rule: (_jwt, s, e) => table(e, s).auth!.options.authRules?.canSignIn !== undefined,
    // Any wrong password is the same 401: only its type is checked here.
    body: Type.Object({ type: Type.Literal('signIn'), table: AuthTable, email: Type.String({ 'x-tablebase-model': 'Email' }), password: Type.String({ 'x-tablebase-model': 'AnyPassword' }) }),
    responses: { 200: Session },
    errors: ['INVALID_CREDENTIALS', 'NOT_FOUND'],
    examples: { body: { type: 'signIn', table: 'users', email: 'ann@example.com', password: 'correct horse battery' } },
    handler: ({ body }, s) => s.authFlows.signIn(authTableOf(s.rt.model, body.table), body),
  }),
  defineRoute({
    method: 'POST',
    path: '/auth/verify-email',
    family: 'auth',
    summary: 'Send (or resend) the verification email',
    description: 'Answers 200 whether or not the address is known; sent only to an unverified user. 403 when the table has no auth rules.',
    operationId: 'verifyEmail',
    access: 'public',
    rateLimit: keyed('verifyEmail'),
    rule: (_jwt, s, e) => table(e, s).auth!.options.authRules !== undefined,
    body: Type.Object({ type: Type.Optional(Type.Literal('verifyEmail')), table: AuthTable, email: Email }),
    responses: { 200: 'Accepted; empty body' },
    errors: ['NOT_FOUND'],
    examples: { body: { table: 'users', email: 'ann@example.com' } },
    handler: async ({ body }, s) => {
      await s.authFlows.verifyEmail(authTableOf(s.rt.model, body.table), body.email);
      return empty();
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/auth/confirm',
    family: 'auth',
    summary: 'Confirm an email verification, a password reset, a magic link or an email change',
    description:
      'An unknown, used or expired token is 400 INVALID_CONFIRMATION_TOKEN (looked up before a new password is hashed), as is a reset or verification token sent to an address the account no longer has. A confirmed reset revokes every session of the user. `confirmMagicLink` answers the user and a token pair, the other types an empty body; `confirmEmailChange` is 409 when the new address was taken meanwhile. Without `table` the rate limit is keyed `auth:confirm`.',
    operationId: 'confirm',
    access: 'public',
    rateLimit: keyedIfNamed('confirm'),
    // The token's shape is the confirmation store's to judge: any bad token is INVALID_CONFIRMATION_TOKEN.
    body: Type.Object(
      {
        type: Type.Union([Type.Literal('confirmVerifyEmail'), Type.Literal('confirmResetPassword'), Type.Literal('confirmMagicLink'), Type.Literal('confirmEmailChange')]),
        token: Type.Optional(Type.Unknown()),
        newPassword: Type.Optional(Type.Unknown()),
        table: OptionalTable,
      },
      { 'x-tablebase-model': 'ConfirmRequest' },
    ),
    responses: { 200: { description: 'Confirmed: an empty body, or for confirmMagicLink the user and a token pair', data: Session } },
    errors: ['INVALID_CONFIRMATION_TOKEN', 'NOT_FOUND', 'CONFLICT', 'UNAVAILABLE'],
    examples: { body: { type: 'confirmVerifyEmail', token: 'token-from-the-email' } },
    handler: async ({ body }, s) => {
      if (body.type === 'confirmMagicLink') return confirmMagicLink(s, body.token); // docs/reference/auth.md
      if (body.type === 'confirmVerifyEmail') await s.authFlows.confirmVerifyEmail(body.token);
      else if (body.type === 'confirmEmailChange')
        await confirmEmailChange(s, body.token); // docs/reference/auth.md
      else await s.authFlows.confirmResetPassword(body.token, body.newPassword);
      return empty();
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/auth/reset-password',
    family: 'auth',
    summary: 'Send a password-reset email',
    description: 'Answers 200 whether or not the email exists; canPasswordReset may silently suppress the email (docs/reference/auth.md).',
    operationId: 'resetPassword',
    access: 'public',
    rateLimit: keyed('passwordReset'),
    body: Type.Object({ type: Type.Literal('sendResetPassword'), table: AuthTable, email: Email }),
    responses: { 200: 'Accepted; empty body' },
    errors: ['NOT_FOUND'],
    examples: { body: { type: 'sendResetPassword', table: 'users', email: 'ann@example.com' } },
    handler: async ({ body }, s) => {
      await s.authFlows.resetPassword(authTableOf(s.rt.model, body.table), body.email);
      return empty();
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/auth/refresh',
    family: 'auth',
    summary: 'Rotate a refresh token for a new token pair',
    description: 'Refresh tokens rotate on use; reusing a rotated one revokes that session (401 INVALID_TOKEN).',
    operationId: 'refresh',
    access: 'public',
    rateLimit: keyedIfNamed('refresh'),
    body: Type.Object({ refreshToken: Type.String(), table: OptionalTable }),
    responses: { 200: Session },
    errors: ['INVALID_TOKEN'],
    examples: { body: { refreshToken: 'rt_...' } },
    handler: ({ body }, s) => s.authFlows.refresh(body.refreshToken),
  }),
  defineRoute({
    method: 'POST',
    path: '/auth/logout',
    family: 'auth',
    summary: 'End the session of the bearer token, or every session of its user',
    description: 'Revokes the session and its access token; with the optional body `{"all": true}`, every session of the caller (docs/reference/auth.md). Rate limited as `auth:logout`.',
    operationId: 'logout',
    access: 'bearer',
    rateLimit: { table: AUTH_NO_TABLE, op: 'logout' },
    // The body is optional (a plain logout sends none), so it is read here rather than by the lifecycle.
    body: 'raw',
    responses: { 204: 'Signed out; no body' },
    handler: async ({ jwt, source }, s) => {
      await s.authFlows.logout(jwt, (await logoutBody(source)).all === true);
      return noContent();
    },
  }),
];

const MAX_LOGOUT_BODY = 1024;

/** `{}` or `{"all": boolean}`: an empty body is allowed; anything else is 400, a non-JSON type 415. */
async function logoutBody(source: RequestStream): Promise<{ all?: boolean }> {
  const raw = await readSmallBody(source, MAX_LOGOUT_BODY);
  if (raw.length === 0) return {};
  if (!/^application\/(.+\+)?json\b/i.test(String(source.headers['content-type'] ?? ''))) throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Send JSON with Content-Type: application/json');
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new ApiError('BAD_REQUEST', 'The request body is not valid JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ApiError('BAD_REQUEST', 'The body must be a JSON object');
  const { all, ...rest } = body as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) throw new ApiError('BAD_REQUEST', `unknown field "${extra}"`, { details: [{ path: `/${extra}`, message: 'unknown field' }] });
  if (all !== undefined && typeof all !== 'boolean') throw new ApiError('BAD_REQUEST', 'all must be a boolean', { details: [{ path: '/all', message: 'must be a boolean' }] });
  return { all: all as boolean | undefined };
}
