/**
 * The auth routes (SPEC §8, seed "Authentication endpoints"), through the same pipeline order:
 * rate limit (per auth table and auth operation) → auth rules → body checks → auth SQL through
 * the writer → auth hooks. Sign-up and sign-in answer {user, accessToken, refreshToken, expiresIn}.
 */
import type { App } from '../core/app.js';
import { ApiError, badRequest } from '../core/errors.js';
import type { CollectionModel } from '../core/model.js';
import type { Jwt } from '../define/types.js';
import { jsonBody } from '../http/body.js';
import type { RequestContext } from '../http/context.js';
import { sendData, sendNoContent, setHeaders } from '../http/respond.js';
import { runAfterHook } from '../pipeline/execute/hooks.js';
import { createRows } from '../pipeline/execute/writes.js';
import { checkCreateObject } from '../pipeline/plan/objects.js';
import { Scope } from '../pipeline/scope.js';
import type { Row } from '../storage/plan.js';
import { normalizeEmail } from '../pipeline/plan/values.js';
import { passwordWithinBounds } from './passwords.js';
import { sessionIdOf } from './jwt.js';
import { findCredentials, findUser, setUserColumns } from './users.js';

type Body = Record<string, unknown>;

/** The seed's "200, empty body". */
const sendEmpty = (ctx: RequestContext) => {
  ctx.res.writeHead(200, { 'content-length': 0 });
  ctx.res.end();
};

/** SPEC §13.2: a table that is not an auth table, or none, is 404. */
function authTableOf(app: App, table: unknown): CollectionModel {
  const c = typeof table === 'string' ? app.rt.model.collections.get(table) : undefined;
  if (!c?.auth) throw new ApiError('NOT_FOUND', 'No auth table by that name');
  return c;
}

async function limit(ctx: RequestContext, table: string, op: string): Promise<void> {
  const h = ctx.app.rt.limiter.enforce(ctx.ip, table, op);
  const headers = h instanceof Promise ? await h : h;
  if (headers) setHeaders(ctx.res, headers);
}

function expectType(body: Body, type: string): void {
  if (body.type !== type) throw badRequest('/type', `type must be "${type}"`);
}

function sendInBackground(app: App, send: () => Promise<void>): void {
  send().catch((err) => app.rt.log.error({ err }, 'auth email not sent'));
}

async function verdict(v: boolean | Promise<boolean> | undefined): Promise<boolean> {
  return (await v) === true;
}

/**
 * The claims of a token this server has just signed: read back without a second HMAC, which
 * measurably slowed sign-in (the hooks receive them as their caller's token).
 */
function claimsOf(token: string): Jwt {
  return Object.freeze(JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Jwt);
}

/** Signs the access token and starts a session: the answer of sign-up and sign-in. */
async function issueTokens(app: App, c: CollectionModel, user: Row) {
  const { auth } = app;
  const session = await auth.sessions.start({ table: c.name, userId: user.id });
  const claims = c.auth!.options.claims ? await c.auth!.options.claims(user as never) : undefined;
  const { token, expiresIn } = await auth.tokens.sign({ user: { id: user.id }, table: c.name, isAdmin: c.auth!.admin, sessionId: session.sessionId, customClaims: claims });
  const jwt = claimsOf(token);
  return { answer: { user, accessToken: token, refreshToken: session.refreshToken, expiresIn }, jwt };
}

async function authHook(app: App, jwt: Jwt | null, run: (scope: Scope) => unknown): Promise<void> {
  const scope = new Scope(app.rt, jwt);
  await runAfterHook(app.rt, 'auth hook', () => run(scope));
  scope.committed();
}

export async function signUp(ctx: RequestContext): Promise<void> {
  const { app } = ctx;
  const body = await jsonBody(ctx.req, ctx.search, app.config.maxBodyBytes);
  const c = authTableOf(app, body.table);
  await limit(ctx, c.name, 'signUp'); //                                        1
  const rules = c.auth!.options.authRules;
  const object = (typeof body.object === 'object' && body.object !== null ? body.object : {}) as Body;
  if (!(await verdict(rules?.canSignUp?.({ email: String(body.email ?? ''), object })))) throw new ApiError('FORBIDDEN'); // 2
  expectType(body, 'signUp'); //                                                3
  for (const k of Object.keys(body)) if (!['type', 'table', 'email', 'password', 'object'].includes(k)) throw badRequest(`/${k}`, `unknown field "${k}"`);
  const email = normalizeEmail(body.email, '/email');
  const password = app.auth.passwords.validate(body.password);
  for (const k of Object.keys(object)) if (!c.auth!.signUpFields.includes(k)) throw badRequest(`/object/${k}`, `"${k}" cannot be set at sign-up`);
  const fields = checkCreateObject(c, object, '/object');
  const hash = await app.auth.passwords.hash(password); //                      4
  const scope = new Scope(app.rt, null);
  const created = await createRows(c, [{ ...fields, email, password: hash }], { scope, trusted: true }, false);
  const user = created.value[0]!;
  await created.after();
  scope.committed();
  const { answer, jwt } = await issueTokens(app, c, user);
  const onSignUp = c.auth!.options.authHooks?.onSignUp;
  if (onSignUp) await authHook(app, jwt, (s) => onSignUp(s.context, user as never)); // 6
  sendData(ctx.res, answer);
}

export async function signIn(ctx: RequestContext): Promise<void> {
  const { app } = ctx;
  const body = await jsonBody(ctx.req, ctx.search, app.config.maxBodyBytes);
  const c = authTableOf(app, body.table);
  await limit(ctx, c.name, 'signIn');
  const rules = c.auth!.options.authRules;
  if (!rules?.canSignIn) throw new ApiError('FORBIDDEN');
  expectType(body, 'signIn');
  if (typeof body.email !== 'string') throw badRequest('/email', 'must be a string');
  if (typeof body.password !== 'string') throw badRequest('/password', 'must be a string');
  let email: string | null;
  try {
    email = normalizeEmail(body.email, '/email');
  } catch {
    email = null;
  }
  // Same answer and comparable time for an unknown email and a wrong password (SPEC §2).
  const found = email ? await findCredentials(app.rt, c, email) : null;
  const ok = found && passwordWithinBounds(body.password, 1, 1024) ? await app.auth.passwords.verify(found.hash, body.password) : await app.auth.passwords.verifyDummy(body.password.slice(0, 1024));
  if (!ok || !found) throw new ApiError('INVALID_CREDENTIALS');
  const user = await findUser(app.rt, c, 'id', found.id);
  if (!user) throw new ApiError('INVALID_CREDENTIALS');
  if (!(await verdict(rules.canSignIn(user as never)))) throw new ApiError('FORBIDDEN');
  const { answer, jwt } = await issueTokens(app, c, user);
  const onSignIn = c.auth!.options.authHooks?.onSignIn;
  if (onSignIn) await authHook(app, jwt, (s) => onSignIn(s.context, user as never));
  sendData(ctx.res, answer);
}

export async function refresh(ctx: RequestContext): Promise<void> {
  const { app } = ctx;
  const body = await jsonBody(ctx.req, ctx.search, app.config.maxBodyBytes);
  if (body.table !== undefined) await limit(ctx, authTableOf(app, body.table).name, 'refresh');
  if (typeof body.refreshToken !== 'string') throw badRequest('/refreshToken', '"refreshToken" is required');
  const r = await app.auth.sessions.refresh(body.refreshToken);
  const c = app.rt.model.collections.get(r.table);
  const user = c?.auth ? await findUser(app.rt, c, 'id', r.userId) : null;
  if (!c || !user) {
    await app.auth.sessions.logout(r.sessionId);
    throw new ApiError('INVALID_TOKEN');
  }
  const claims = c.auth!.options.claims ? await c.auth!.options.claims(user as never) : undefined;
  const { token, expiresIn } = await app.auth.tokens.sign({ user: { id: user.id }, table: c.name, isAdmin: c.auth!.admin, sessionId: r.sessionId, customClaims: claims });
  const onRefresh = c.auth!.options.authHooks?.onRefresh;
  if (onRefresh) await authHook(app, claimsOf(token), (s) => onRefresh(s.context, user as never));
  sendData(ctx.res, { user, accessToken: token, refreshToken: r.refreshToken, expiresIn });
}

export async function logout(ctx: RequestContext): Promise<void> {
  const { app } = ctx;
  const jwt = await app.rt.tokens.verify(ctx.req.headers.authorization);
  if (!jwt) throw new ApiError('UNAUTHENTICATED');
  await app.auth.sessions.logout(sessionIdOf(jwt));
  const c = app.rt.model.collections.get(jwt.table);
  const onLogout = c?.auth?.options.authHooks?.onLogout;
  if (onLogout) await authHook(app, jwt, (s) => onLogout(s.context, { id: jwt.userId }));
  sendNoContent(ctx.res);
}

/** Sends (or resends) the verification email; 200 whether or not the address is known. */
export async function verifyEmail(ctx: RequestContext): Promise<void> {
  const { app } = ctx;
  const body = await jsonBody(ctx.req, ctx.search, app.config.maxBodyBytes);
  const c = authTableOf(app, body.table);
  await limit(ctx, c.name, 'verifyEmail');
  if (!c.auth!.options.authRules) throw new ApiError('FORBIDDEN');
  if (body.type !== undefined) expectType(body, 'verifyEmail');
  const email = normalizeEmail(body.email, '/email');
  const user = await findUser(app.rt, c, 'email', email);
  // Not awaited: an answer that waited for delivery would tell, by its status or its timing,
  // whether the address has an account (SPEC §8).
  if (user && user.isVerified !== true) sendInBackground(app, () => app.rt.email!.sendVerification({ id: user.id, email }, c.name));
  sendEmpty(ctx);
}

/** 200 whether or not the address exists; `canPasswordReset` may silently suppress it (SPEC §13.3). */
export async function resetPassword(ctx: RequestContext): Promise<void> {
  const { app } = ctx;
  const body = await jsonBody(ctx.req, ctx.search, app.config.maxBodyBytes);
  const c = authTableOf(app, body.table);
  await limit(ctx, c.name, 'passwordReset');
  expectType(body, 'sendResetPassword');
  const email = normalizeEmail(body.email, '/email');
  const allowed = await verdict(c.auth!.options.authRules?.canPasswordReset?.({ email }));
  const user = allowed ? await findUser(app.rt, c, 'email', email) : null;
  if (user) sendInBackground(app, () => app.rt.email!.sendPasswordReset({ id: user.id, email }, c.name));
  sendEmpty(ctx);
}

export async function confirm(ctx: RequestContext): Promise<void> {
  const { app } = ctx;
  const rt = app.rt;
  const body = await jsonBody(ctx.req, ctx.search, app.config.maxBodyBytes);
  // The body names no table; one may be given to key the rate limit (docs/decisions.md).
  if (body.table !== undefined) await limit(ctx, authTableOf(app, body.table).name, 'confirm');
  if (body.type === 'confirmVerifyEmail') {
    await rt.writer.submit(async (tx, changes) => {
      const record = await app.auth.confirmTokens.consume('verify', body.token, tx);
      const c = rt.model.collections.get(record.table);
      const user = c?.auth ? await findUser(rt, c, 'id', record.userId, tx) : null;
      // A token sent to an address the user no longer has verifies nothing.
      if (!c || !user || user.email !== record.email) throw new ApiError('INVALID_CONFIRMATION_TOKEN');
      await setUserColumns(rt, tx, c, user.id, { isVerified: true }, changes);
    });
    return sendEmpty(ctx);
  }
  if (body.type === 'confirmResetPassword') {
    const password = app.auth.passwords.validate(body.newPassword, '/newPassword');
    const hash = await app.auth.passwords.hash(password);
    await rt.writer.submit(async (tx, changes) => {
      const record = await app.auth.confirmTokens.consume('reset', body.token, tx);
      const c = rt.model.collections.get(record.table);
      if (!c?.auth || !(await setUserColumns(rt, tx, c, record.userId, { password: hash }, changes))) throw new ApiError('INVALID_CONFIRMATION_TOKEN');
      await app.auth.sessions.revokeAllForUser({ table: c.name, userId: record.userId }, 'reset', tx);
    });
    return sendEmpty(ctx);
  }
  throw badRequest('/type', 'type must be "confirmVerifyEmail" or "confirmResetPassword"');
}
