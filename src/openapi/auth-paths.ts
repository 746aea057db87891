/**
 * The /auth routes (seed "Authentication endpoints", SPEC §8, §13.2–§13.4). Every body names an
 * auth table; sign-up's `object` takes only the table's `signUpFields`.
 */
import type { CollectionModel } from '../core/model.js';
import { exampleRow } from './collection-schemas.js';
import { errors, RATE_LIMIT_HEADERS } from './components.js';
import { anyOf, exampleCollection, jsonOk, nameEnum, partName, partRef, perTableBody, schemaRef, withHeaders, type DocContext, type JsonSchema, type RouteDoc } from './context.js';
import { valueSchema } from './values.js';

const DEFAULT_MIN = 8;
const DEFAULT_MAX = 1024;

function passwordSchema(ctx: DocContext): JsonSchema {
  const a = ctx.model.project.auth;
  return { type: 'string', format: 'password', minLength: a?.passwordMinLength ?? DEFAULT_MIN, maxLength: a?.passwordMaxLength ?? DEFAULT_MAX };
}

const email: JsonSchema = { type: 'string', format: 'email', maxLength: 254, example: 'ann@example.com', description: 'trimmed and lowercased before it is compared' };
const authTableName = (ctx: DocContext): JsonSchema => nameEnum(ctx.authTables.map((c) => c.name));
const typeEnum = (t: string): JsonSchema => ({ type: 'string', enum: [t] });
/** Optional on confirm and refresh, whose bodies name no table: it only keys the rate limit (SPEC §9). */
const rateLimitTable = (ctx: DocContext): JsonSchema => ({ ...authTableName(ctx), description: 'optional: the auth table whose rate-limit policy applies' });
/** Sign-in checks only that a password is a string: any wrong one is the same 401. */
const anyPassword: JsonSchema = { type: 'string', format: 'password', maxLength: DEFAULT_MAX };
const firstAuth = (ctx: DocContext): string => ctx.authTables.find((c) => !c.auth?.admin)?.name ?? ctx.authTables[0]?.name ?? 'users';

function signUpBody(ctx: DocContext, c: CollectionModel): JsonSchema {
  const fields: Record<string, JsonSchema> = {};
  for (const f of c.auth?.signUpFields ?? []) fields[f] = valueSchema(c, c.columns.get(f)!, true);
  return {
    type: 'object',
    required: ['type', 'table', 'email', 'password'],
    properties: {
      type: typeEnum('signUp'),
      table: nameEnum([c.name]),
      email,
      password: passwordSchema(ctx),
      object: { type: 'object', description: "extra row fields: only the table's signUpFields", properties: fields, additionalProperties: false },
    },
    additionalProperties: false,
    example: { type: 'signUp', table: c.name, email: 'ann@example.com', password: 'correct horse battery' },
  };
}

/** Auth components: per-table sign-up bodies, the session answers, the confirm bodies. */
export function authSchemas(ctx: DocContext): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const c of ctx.authTables) out[partName(c, 'SignUpBody')] = signUpBody(ctx, c);
  const tokens = {
    accessToken: { type: 'string', description: 'a JWT (HS256); send as `Authorization: Bearer <token>`' },
    refreshToken: { type: 'string', description: 'opaque; rotated on use' },
    expiresIn: { type: 'integer', minimum: 1, description: 'seconds until the access token expires', example: 3600 },
  };
  const user = anyOf(ctx.authTables.map((c) => partRef(c, 'Row')));
  out.AuthSession = { type: 'object', required: ['user', 'accessToken', 'refreshToken', 'expiresIn'], properties: { user, ...tokens }, additionalProperties: false };
  out.ConfirmVerifyEmail = {
    type: 'object',
    required: ['type', 'token'],
    properties: { type: typeEnum('confirmVerifyEmail'), token: { type: 'string', description: 'from the verification email' }, table: rateLimitTable(ctx) },
    additionalProperties: false,
  };
  out.ConfirmResetPassword = {
    type: 'object',
    required: ['type', 'token', 'newPassword'],
    properties: { type: typeEnum('confirmResetPassword'), token: { type: 'string', description: 'from the reset email' }, newPassword: passwordSchema(ctx), table: rateLimitTable(ctx) },
    additionalProperties: false,
  };
  // SPEC §8a, §8: the magic link signs in; the email change sets the new address.
  out.ConfirmMagicLink = {
    type: 'object',
    required: ['type', 'token'],
    properties: { type: typeEnum('confirmMagicLink'), token: { type: 'string', description: 'from the magic-link email' }, table: rateLimitTable(ctx) },
    additionalProperties: false,
  };
  out.ConfirmEmailChange = {
    type: 'object',
    required: ['type', 'token'],
    properties: { type: typeEnum('confirmEmailChange'), token: { type: 'string', description: 'from the email sent to the new address' }, table: rateLimitTable(ctx) },
    additionalProperties: false,
  };
  return out;
}

const body = (schema: JsonSchema, example?: unknown): JsonSchema => ({ required: true, content: { 'application/json': { schema, ...(example === undefined ? {} : { example }) } } });
const emptyOk = (description: string): JsonSchema => withHeaders({ description: `${description}; empty body` }, RATE_LIMIT_HEADERS);

function sessionOk(ctx: DocContext, schema: string, description: string): JsonSchema {
  const c = ctx.authTables.find((t) => !t.auth?.admin) ?? ctx.authTables[0] ?? exampleCollection(ctx);
  const example = { user: c ? exampleRow(c) : {}, accessToken: 'eyJhbGciOiJIUzI1NiJ9...', refreshToken: 'rt_...', expiresIn: 3600 };
  return withHeaders(jsonOk(description, schemaRef(schema), example), RATE_LIMIT_HEADERS);
}

export const authRoutes: readonly RouteDoc[] = [
  {
    method: 'POST',
    path: '/auth/sign-up',
    group: 'auth',
    operationId: 'signUp',
    summary: 'Sign up to an auth table',
    describe: (ctx) => ({
      description:
        'Creates the row with isVerified false. A taken email is 409; fields outside signUpFields are 400; without auth rules (canSignUp) it is 403. A table that is not an auth table is 404.',
      security: [],
      requestBody: body(perTableBody(ctx.authTables, 'SignUpBody')),
      responses: {
        '200': sessionOk(ctx, 'AuthSession', 'The new user and a token pair'),
        ...errors('BadRequest', 'Forbidden', 'NotFound', 'Conflict', 'PayloadTooLarge', 'RateLimited', 'Internal', 'Unavailable'),
      },
    }),
  },
  {
    method: 'POST',
    path: '/auth/sign-in',
    group: 'auth',
    operationId: 'signIn',
    summary: 'Sign in with email and password',
    describe: (ctx) => ({
      description: 'A wrong password and an unknown email answer the same 401 INVALID_CREDENTIALS. canSignIn may refuse (403).',
      security: [],
      requestBody: body(
        {
          type: 'object',
          required: ['type', 'table', 'email', 'password'],
          properties: { type: typeEnum('signIn'), table: authTableName(ctx), email, password: anyPassword },
          additionalProperties: false,
        },
        { type: 'signIn', table: firstAuth(ctx), email: 'ann@example.com', password: 'correct horse battery' },
      ),
      responses: { '200': sessionOk(ctx, 'AuthSession', 'The user and a token pair'), ...errors('BadRequest', 'Unauthorized', 'Forbidden', 'NotFound', 'RateLimited', 'Internal') },
    }),
  },
  {
    method: 'POST',
    path: '/auth/verify-email',
    group: 'auth',
    operationId: 'verifyEmail',
    summary: 'Send (or resend) the verification email',
    describe: (ctx) => ({
      security: [],
      description: 'Answers 200 whether or not the address is known; sent only to an unverified user. 403 when the table has no auth rules.',
      requestBody: body(
        { type: 'object', required: ['table', 'email'], properties: { type: typeEnum('verifyEmail'), table: authTableName(ctx), email } },
        { table: firstAuth(ctx), email: 'ann@example.com' },
      ),
      responses: { '200': emptyOk('Accepted'), ...errors('BadRequest', 'Forbidden', 'NotFound', 'RateLimited', 'Internal') },
    }),
  },
  {
    method: 'POST',
    path: '/auth/confirm',
    group: 'auth',
    operationId: 'confirm',
    summary: 'Confirm an email, a password reset, a magic link or an email change with the emailed token',
    describe: (ctx) => ({
      description:
        'An unknown, used or expired token is 400 INVALID_CONFIRMATION_TOKEN (checked before a new password is hashed), as is a reset or verification token sent to an address the account no longer has. A confirmed reset revokes every session of the user. `confirmMagicLink` answers the user and a token pair; the other types an empty 200. `confirmEmailChange` is 409 when the new address was taken meanwhile. Without `table`, the rate limit is keyed `auth:confirm`.',
      security: [],
      requestBody: body(
        {
          oneOf: [schemaRef('ConfirmVerifyEmail'), schemaRef('ConfirmResetPassword'), schemaRef('ConfirmMagicLink'), schemaRef('ConfirmEmailChange')],
          discriminator: {
            propertyName: 'type',
            mapping: {
              confirmVerifyEmail: '#/components/schemas/ConfirmVerifyEmail',
              confirmResetPassword: '#/components/schemas/ConfirmResetPassword',
              confirmMagicLink: '#/components/schemas/ConfirmMagicLink',
              confirmEmailChange: '#/components/schemas/ConfirmEmailChange',
            },
          },
        },
        { type: 'confirmVerifyEmail', token: 'token-from-the-email' },
      ),
      responses: {
        '200': sessionOk(ctx, 'AuthSession', 'Confirmed. Only confirmMagicLink has a body (the user and a token pair); the other types answer an empty body'),
        ...errors('BadRequest', 'NotFound', 'Conflict', 'RateLimited', 'Internal', 'Unavailable'),
      },
    }),
  },
  {
    method: 'POST',
    path: '/auth/reset-password',
    group: 'auth',
    operationId: 'resetPassword',
    summary: 'Send a password-reset email',
    describe: (ctx) => ({
      description: 'Answers 200 whether or not the email exists; canPasswordReset may silently suppress the email (SPEC §13.3).',
      security: [],
      requestBody: body(
        { type: 'object', required: ['type', 'table', 'email'], properties: { type: typeEnum('sendResetPassword'), table: authTableName(ctx), email }, additionalProperties: false },
        { type: 'sendResetPassword', table: firstAuth(ctx), email: 'ann@example.com' },
      ),
      responses: { '200': emptyOk('Accepted'), ...errors('BadRequest', 'NotFound', 'RateLimited', 'Internal') },
    }),
  },
  {
    method: 'POST',
    path: '/auth/refresh',
    group: 'auth',
    operationId: 'refresh',
    summary: 'Exchange a refresh token for a new pair',
    describe: (ctx) => ({
      description: 'Refresh tokens rotate on use; reusing a rotated one revokes that session (401 INVALID_TOKEN).',
      security: [],
      requestBody: body(
        { type: 'object', required: ['refreshToken'], properties: { refreshToken: { type: 'string' }, table: rateLimitTable(ctx) }, additionalProperties: false },
        { refreshToken: 'rt_...' },
      ),
      responses: { '200': sessionOk(ctx, 'AuthSession', 'The user and a new token pair'), ...errors('BadRequest', 'Unauthorized', 'RateLimited', 'Internal') },
    }),
  },
  {
    method: 'POST',
    path: '/auth/logout',
    group: 'auth',
    operationId: 'logout',
    summary: 'Revoke the session of the bearer token, or every session of its user',
    describe: () => ({
      description: 'Revokes the session and its access token; with `{"all": true}`, every session of the caller (SPEC §8). The body is optional.',
      security: [{ bearerAuth: [] }],
      requestBody: {
        required: false,
        content: { 'application/json': { schema: { type: 'object', properties: { all: { type: 'boolean', default: false } }, additionalProperties: false }, example: { all: true } } },
      },
      responses: { '204': { description: 'Signed out; no body' }, ...errors('Unauthorized', 'RateLimited', 'Internal') },
    }),
  },
];
