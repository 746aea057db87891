/**
 * The /auth routes (SPEC §8, seed "Authentication endpoints"), through the one lifecycle: the
 * body names an auth table (404 otherwise) → rate limit per auth table and operation → the auth
 * rule → body schema → the auth service (src/auth/flows.ts). Sign-up's document body is the
 * model's per-table SignUpBody (only the table's signUpFields in `object`).
 */
import { Type } from '@sinclair/typebox';
import { authTableOf } from '../../auth/flows.js';
import { defineRoute, empty, modelSchema, noContent, type EarlyRequest, type RateLimitKey } from '../declare.js';
import type { Services } from '../services.js';

const table = (e: EarlyRequest, s: Services) => authTableOf(s.rt.model, e.body?.table);
/** Step 1 keyed by the auth table the body names. */
const keyed =
  (op: string) =>
  (e: EarlyRequest, s: Services): RateLimitKey => ({ table: table(e, s).name, op });
/** Confirm and refresh name no table; one may be given to key the rate limit (docs/decisions.md). */
const keyedIfNamed =
  (op: string) =>
  (e: EarlyRequest, s: Services): RateLimitKey | null =>
    e.body?.table === undefined ? null : keyed(op)(e, s);

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
      return table(e, s).auth!.options.authRules?.canSignUp?.({ email: String(e.body?.email ?? ''), object }) ?? false;
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
    // Without canSignIn nobody signs in: 403 before the body's shape (SPEC §5); the rule runs on the user later.
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
    summary: 'Confirm an email verification or a password reset',
    description: 'An unknown, used or expired token is 400 INVALID_CONFIRMATION_TOKEN. A confirmed reset revokes every session of the user.',
    operationId: 'confirm',
    access: 'public',
    rateLimit: keyedIfNamed('confirm'),
    // The token's shape is the confirmation store's to judge: any bad token is INVALID_CONFIRMATION_TOKEN.
    body: Type.Object(
      {
        type: Type.Union([Type.Literal('confirmVerifyEmail'), Type.Literal('confirmResetPassword')]),
        token: Type.Optional(Type.Unknown()),
        newPassword: Type.Optional(Type.Unknown()),
        table: OptionalTable,
      },
      { 'x-tablebase-model': 'ConfirmRequest' },
    ),
    responses: { 200: 'Confirmed; empty body' },
    errors: ['INVALID_CONFIRMATION_TOKEN', 'NOT_FOUND', 'UNAVAILABLE'],
    examples: { body: { type: 'confirmVerifyEmail', token: 'token-from-the-email' } },
    handler: async ({ body }, s) => {
      if (body.type === 'confirmVerifyEmail') await s.authFlows.confirmVerifyEmail(body.token);
      else await s.authFlows.confirmResetPassword(body.token, body.newPassword);
      return empty();
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/auth/reset-password',
    family: 'auth',
    summary: 'Send a password-reset email',
    description: 'Answers 200 whether or not the email exists; canPasswordReset may silently suppress the email (SPEC §13.3).',
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
    summary: 'End the session of the bearer token',
    description: 'Revokes the session and its access token.',
    operationId: 'logout',
    access: 'bearer',
    body: 'none',
    responses: { 204: 'Signed out; no body' },
    handler: async ({ jwt }, s) => {
      await s.authFlows.logout(jwt!);
      return noContent();
    },
  }),
];
