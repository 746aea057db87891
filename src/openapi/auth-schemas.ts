/**
 * The model's part of the /auth routes' document (docs/reference/auth.md): per auth table sign-up
 * bodies (`object` takes only the table's `signUpFields`), the session answer, the confirm bodies,
 * and the schemas declarations name with `x-tablebase-model` (auth table names, email, password).
 */
import type { CollectionModel } from '../core/model.js';
import { exampleRow } from './collection-schemas.js';
import { anyOf, exampleCollection, nameEnum, partName, partRef, schemaRef, type DocContext, type JsonSchema } from './context.js';
import { valueSchema } from './values.js';

const DEFAULT_MIN = 8;
const DEFAULT_MAX = 1024;

function passwordSchema(ctx: DocContext): JsonSchema {
  const a = ctx.model.project.auth;
  return { type: 'string', format: 'password', minLength: a?.passwordMinLength ?? DEFAULT_MIN, maxLength: a?.passwordMaxLength ?? DEFAULT_MAX };
}

export const email: JsonSchema = { type: 'string', format: 'email', maxLength: 254, example: 'ann@example.com', description: 'trimmed and lowercased before it is compared' };
export const authTableName = (ctx: DocContext): JsonSchema => nameEnum(ctx.authTables.map((c) => c.name));
const typeEnum = (t: string): JsonSchema => ({ type: 'string', enum: [t] });
/** Optional on confirm and refresh, whose bodies name no table: it only keys the rate limit (docs/reference/rate-limits.md). */
export const rateLimitTable = (ctx: DocContext): JsonSchema => ({ ...authTableName(ctx), description: 'optional: the auth table whose rate-limit policy applies' });
/** Sign-in checks only that a password is a string: any wrong one is the same 401. */
export const anyPassword: JsonSchema = { type: 'string', format: 'password', maxLength: DEFAULT_MAX };
export const firstAuth = (ctx: DocContext): string => ctx.authTables.find((c) => !c.auth?.admin)?.name ?? ctx.authTables[0]?.name ?? 'users';

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
  // docs/reference/auth.md: the magic link signs in; the email change sets the new address.
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

/** The sign-up, sign-in… session answer, with an example user of the first auth table. */
export function sessionExample(ctx: DocContext): unknown {
  const c = ctx.authTables.find((t) => !t.auth?.admin) ?? ctx.authTables[0] ?? exampleCollection(ctx);
  return { user: c ? exampleRow(c) : {}, accessToken: 'eyJhbGciOiJIUzI1NiJ9...', refreshToken: 'rt_...', expiresIn: 3600 };
}

export const confirmBody: JsonSchema = {
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
};
