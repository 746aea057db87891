/**
 * What every way of signing in ends with (docs/reference/auth.md): `canSignIn`, a session and its token
 * pair, `isVerified` set when the method proved the address, and the `onSignUp` / `onSignIn`
 * hooks with the method's name. Used by the password routes, OTP, magic links and OAuth alike,
 * so they answer the same `{user, accessToken, refreshToken, expiresIn}`.
 */
import { ApiError } from '../core/errors.js';
import type { CollectionModel } from '../core/model.js';
import type { Runtime } from '../core/runtime.js';
import type { SignInInfo } from '../define/signin.js';
import type { Jwt } from '../define/types.js';
import { createTrusted, runHook } from '../pipeline/index.js';
import type { Row } from '../storage/plan.js';
import type { AuthServices } from './index.js';
import { setUserColumns } from './users.js';

/** What the sign-in services need from the server: the runtime and the auth services. */
export interface SignInDeps {
  readonly rt: Runtime;
  readonly auth: AuthServices;
}

export interface SignInAnswer {
  user: Row;
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
}

/**
 * Stored as the password of accounts created by OTP, magic link or OAuth: no Argon2id hash has
 * this shape, so password sign-in never matches it, and a reset later stores a real hash (docs/reference/auth.md).
 */
export const NO_PASSWORD = '';

export async function verdict(v: boolean | Promise<boolean> | undefined): Promise<boolean> {
  return (await v) === true;
}

/**
 * The claims of a token this server has just signed: read back without a second HMAC, which
 * measurably slowed sign-in (the hooks receive them as their caller's token).
 */
export function claimsOf(token: string): Jwt {
  return Object.freeze(JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Jwt);
}

/** Signs the access token and starts a session. */
export async function issueTokens(d: SignInDeps, c: CollectionModel, user: Row): Promise<{ answer: SignInAnswer; jwt: Jwt }> {
  const session = await d.auth.sessions.start({ table: c.name, userId: user.id });
  const claims = c.auth!.options.claims ? await c.auth!.options.claims(user as never) : undefined;
  const { token, expiresIn } = await d.auth.tokens.sign({ user: { id: user.id }, table: c.name, isAdmin: c.auth!.admin, sessionId: session.sessionId, customClaims: claims });
  return { answer: { user, accessToken: token, refreshToken: session.refreshToken, expiresIn }, jwt: claimsOf(token) };
}

/** `canSignUp` for a row that a passwordless or federated sign-in would create. */
export function mayCreate(c: CollectionModel, email: string): Promise<boolean> {
  return verdict(c.auth!.options.authRules?.canSignUp?.({ email, object: {} }));
}

/** Creates a row with no password, verified when the sign-in proved the address (docs/reference/auth.md). */
export async function createVerifiedUser(rt: Runtime, c: CollectionModel, email: string, verified = true): Promise<Row> {
  const [user] = await createTrusted(rt, c, [{ email, password: NO_PASSWORD, isVerified: verified }]);
  return user!;
}

/**
 * Finishes a passwordless or federated sign-in of `user` (just created when `created`): refuses
 * with 403 when `canSignIn` does, marks the address verified when the method `proved` it, issues
 * the tokens, fires the hooks.
 */
export async function completeSignIn(d: SignInDeps, c: CollectionModel, user: Row, info: SignInInfo, created: boolean, proved = true): Promise<SignInAnswer> {
  const rules = c.auth!.options.authRules;
  if (!rules?.canSignIn || !(await verdict(rules.canSignIn(user as never)))) throw new ApiError('FORBIDDEN');
  if (proved && user.isVerified !== true) {
    user = (await d.rt.writer.submit((tx, changes) => setUserColumns(d.rt, tx, c, user.id, { isVerified: true }, changes))) ?? user;
  }
  const { answer, jwt } = await issueTokens(d, c, user);
  const hooks = c.auth!.options.authHooks;
  if (created && hooks?.onSignUp) await runHook(d.rt, jwt, 'auth hook', (ctx) => hooks.onSignUp!(ctx, user as never, info));
  if (hooks?.onSignIn) await runHook(d.rt, jwt, 'auth hook', (ctx) => hooks.onSignIn!(ctx, user as never, info));
  return answer;
}
