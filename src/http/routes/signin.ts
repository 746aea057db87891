/**
 * Passwordless and federated sign-in, and the email change (docs/reference/auth.md), declared the
 * route-API way (http/declare.ts). Each route only adapts: the services in src/auth/ (passwordless.ts,
 * email-change.ts, oauth/flow.ts) do the work.
 *
 * Rate limits (docs/reference/auth.md, docs/reference/rate-limits.md): per IP × table for `otp`, `magicLink`, `oauth`; routes whose body or
 * query names no table use `auth:<operation>` (`changeEmail`, and `oauth` for the callback, whose
 * table is only known from the stored state).
 */
import { Type } from '@sinclair/typebox';
import { confirmEmailChangeSchemaNote, sendChangeEmail } from '../../auth/email-change.js';
import { inBackground, otpOf, requireMagicLink, sendMagicLink, sendOtp, verifyOtp } from '../../auth/passwordless.js';
import { authTableOf } from '../../auth/flows.js';
import { ApiError } from '../../core/errors.js';
import { AUTH_NO_TABLE } from '../../ratelimit/policy.js';
import { normalizeEmail } from '../../pipeline/plan/values.js';
import type { RequestStream } from '../../core/sink.js';
import { defineRoute, empty, redirect } from '../declare.js';
import { readSmallBody } from '../small-body.js';
import type { Services } from '../services.js';

/** docs/reference/auth.md: a table that is not an auth table, or none, is 404. */
const authTableNamed = (s: Services, table: unknown) => authTableOf(s.rt.model, table);

const Email = Type.String({ maxLength: 320, description: 'trimmed and lowercased before use (docs/reference/auth.md)' });
const Table = Type.String({ maxLength: 128, description: 'the auth table' });
const strict = { additionalProperties: false } as const;

export const SignInAnswer = Type.Object({
  user: Type.Record(Type.String(), Type.Unknown(), { description: 'the auth-table row (no password)' }),
  accessToken: Type.String(),
  refreshToken: Type.String(),
  expiresIn: Type.Integer({ description: 'seconds' }),
});

export const signInRoutes = [
  defineRoute({
    method: 'POST',
    path: '/auth/otp/send',
    family: 'auth',
    summary: 'Email a one-time sign-in code',
    description:
      'Answers 200 with an empty body whether or not the address has an account. Emails a 6-digit code (template `otp`) valid 10 minutes; a new send replaces the previous code. With `otp.signUp`, an unknown address gets a code too. 404 when the table has not enabled OTP.',
    operationId: 'sendOtp',
    access: 'public',
    rateLimit: ({ body }, s) => ({ table: authTableNamed(s, body?.table).name, op: 'otp' }),
    body: Type.Object({ type: Type.Literal('sendOtp'), table: Table, email: Email }, strict),
    responses: { 200: 'Empty body; the code is on its way if the address may sign in' },
    errors: ['NOT_FOUND'],
    examples: { body: { type: 'sendOtp', table: 'users', email: 'ann@example.com' } },
    handler: ({ body }, s) => {
      const c = authTableNamed(s, body.table);
      otpOf(c);
      const email = normalizeEmail(body.email, '/email');
      inBackground(s.rt, 'otp', () => sendOtp(s, c, email));
      return empty();
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/auth/otp/verify',
    family: 'auth',
    summary: 'Sign in with a one-time code',
    description: 'A wrong, expired or used code is 401 INVALID_CREDENTIALS; after 5 wrong tries the code is dead. With `otp.signUp` an unknown address is created, verified, with no password.',
    operationId: 'verifyOtp',
    access: 'public',
    rateLimit: ({ body }, s) => ({ table: authTableNamed(s, body?.table).name, op: 'otp' }),
    body: Type.Object({ type: Type.Literal('verifyOtp'), table: Table, email: Email, code: Type.String({ maxLength: 16 }) }, strict),
    responses: { 200: SignInAnswer },
    errors: ['NOT_FOUND', 'INVALID_CREDENTIALS', 'FORBIDDEN'],
    examples: { body: { type: 'verifyOtp', table: 'users', email: 'ann@example.com', code: '042137' } },
    handler: async ({ body }, s) => {
      const c = authTableNamed(s, body.table);
      otpOf(c);
      let email: string;
      try {
        email = normalizeEmail(body.email, '/email');
      } catch {
        throw new ApiError('INVALID_CREDENTIALS', 'Invalid or expired code');
      }
      return verifyOtp(s, c, email, body.code);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/auth/magic-link',
    family: 'auth',
    summary: 'Email a single-use sign-in link',
    description:
      'Answers 200 with an empty body whether or not the address has an account. The link (template `magicLink`) is valid 15 minutes; confirm it with POST /auth/confirm `{"type": "confirmMagicLink", "token"}`. 404 when the table has not enabled magic links.',
    operationId: 'sendMagicLink',
    access: 'public',
    rateLimit: ({ body }, s) => ({ table: authTableNamed(s, body?.table).name, op: 'magicLink' }),
    body: Type.Object({ type: Type.Literal('sendMagicLink'), table: Table, email: Email }, strict),
    responses: { 200: 'Empty body' },
    errors: ['NOT_FOUND'],
    examples: { body: { type: 'sendMagicLink', table: 'users', email: 'ann@example.com' } },
    handler: ({ body }, s) => {
      const c = authTableNamed(s, body.table);
      requireMagicLink(c);
      const email = normalizeEmail(body.email, '/email');
      inBackground(s.rt, 'magicLink', () => sendMagicLink(s, c, email));
      return empty();
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/auth/change-email',
    family: 'auth',
    summary: "Email a link that changes the caller's email address",
    description: `The link goes to the new address (template \`changeEmail\`, 1 hour). ${confirmEmailChangeSchemaNote}`,
    operationId: 'sendChangeEmail',
    access: 'bearer',
    rateLimit: { table: AUTH_NO_TABLE, op: 'changeEmail' },
    body: Type.Object({ type: Type.Literal('sendChangeEmail'), newEmail: Email }, strict),
    responses: { 200: 'Empty body' },
    examples: { body: { type: 'sendChangeEmail', newEmail: 'ann@new.example.com' } },
    handler: async ({ body, jwt }, s) => {
      const send = await sendChangeEmail(s, jwt, body.newEmail);
      inBackground(s.rt, 'changeEmail', send);
      return empty();
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/auth/oauth/:provider/start',
    family: 'auth',
    summary: 'Start an OAuth / OpenID Connect sign-in',
    description:
      'Redirects (302) to the provider with `state`, PKCE (S256) and, for OpenID Connect, `nonce`. `redirectTo` must be in `auth.redirectAllowList` (400 otherwise); an unknown provider is 404.',
    operationId: 'oauthStart',
    access: 'public',
    writes: true, // stores the state

    rateLimit: ({ query }, s) => ({ table: authTableNamed(s, query.table).name, op: 'oauth' }),
    params: Type.Object({ provider: Type.String({ maxLength: 32 }) }),
    query: Type.Object({ table: Table, redirectTo: Type.String({ maxLength: 2048 }) }),
    responses: { 302: 'To the provider' },
    errors: ['NOT_FOUND', 'UNAVAILABLE'],
    handler: async ({ params, query, headers }, s) =>
      redirect(await s.oauth.start({ provider: params.provider, table: query.table, redirectTo: query.redirectTo, host: headers.host as string | undefined })),
  }),
  defineRoute({
    method: 'GET',
    path: '/auth/oauth/:provider/callback',
    family: 'auth',
    summary: 'Finish an OAuth / OpenID Connect sign-in (the provider redirects here)',
    description:
      'Exchanges the code with the PKCE verifier, validates the ID token (or reads the user API), finds or links or creates the user, then 302 to `redirectTo` with `#access_token=…&refresh_token=…&expires_in=…&token_type=bearer`. A failure, or a reused state: 302 to `redirectTo` with `#error=<code>`. An unknown state: 400 INVALID_OAUTH_STATE.',
    operationId: 'oauthCallback',
    access: 'public',
    writes: true, // creates the session

    rateLimit: { table: AUTH_NO_TABLE, op: 'oauth' },
    params: Type.Object({ provider: Type.String({ maxLength: 32 }) }),
    query: Type.Object({ state: Type.Optional(Type.String({ maxLength: 256 })), code: Type.Optional(Type.String({ maxLength: 4096 })) }),
    responses: { 302: 'Back to redirectTo, with the tokens or an error in the fragment' },
    errors: ['INVALID_OAUTH_STATE'],
    handler: async ({ params, query }, s) => redirect((await s.oauth.callback(params.provider, query as Record<string, string>)).location),
  }),
  defineRoute({
    method: 'POST',
    path: '/auth/oauth/:provider/callback',
    family: 'auth',
    summary: 'Finish an OAuth sign-in whose provider posts the answer (response_mode=form_post, e.g. Apple)',
    description: 'The same as the GET callback, with `code` and `state` in an `application/x-www-form-urlencoded` body (at most 16 KiB).',
    operationId: 'oauthCallbackPost',
    access: 'public',
    rateLimit: { table: AUTH_NO_TABLE, op: 'oauth' },
    params: Type.Object({ provider: Type.String({ maxLength: 32 }) }),
    body: 'raw',
    responses: { 302: 'Back to redirectTo, with the tokens or an error in the fragment' },
    errors: ['INVALID_OAUTH_STATE', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE'],
    handler: async ({ params, source }, s) => redirect((await s.oauth.callback(params.provider, await formFields(source))).location),
  }),
];

const MAX_FORM_BYTES = 16 * 1024;

/** The provider's form post: bounded, urlencoded only. */
async function formFields(source: RequestStream): Promise<Record<string, string>> {
  if (!/^application\/x-www-form-urlencoded\b/i.test(String(source.headers['content-type'] ?? ''))) throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Send application/x-www-form-urlencoded');
  const raw = await readSmallBody(source, MAX_FORM_BYTES);
  const out: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(raw.toString('utf8'))) if (!(k in out)) out[k] = v;
  return out;
}
