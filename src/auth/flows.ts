/**
 * The auth flows (docs/reference/auth.md) as a service that takes and returns
 * values; http/routes/auth.ts declares the routes, their rate limits, rules and body schemas.
 * Sign-up writes through the pipeline's write stage (pipeline/index.ts `createTrusted`), so the
 * table's hooks fire as for POST /db; sign-up and sign-in answer {user, accessToken,
 * refreshToken, expiresIn}.
 */
import { ApiError, badRequest } from '../core/errors.js';
import type { CollectionModel, ProjectModel } from '../core/model.js';
import type { Runtime } from '../core/runtime.js';
import type { Jwt } from '../define/types.js';
import { createTrusted, runHook } from '../pipeline/index.js';
import { checkCreateObject } from '../pipeline/plan/objects.js';
import type { Row } from '../storage/plan.js';
import { normalizeEmail } from '../pipeline/plan/values.js';
import type { AuthServices } from './index.js';
import { sessionIdOf } from './jwt.js';
import { passwordWithinBounds } from './passwords.js';
import { claimsOf, issueTokens, NO_PASSWORD } from './sign-in.js';
import { findCredentials, findUser, setUserColumns } from './users.js';

export interface AuthSession {
  readonly user: Row;
  readonly accessToken: string;
  readonly refreshToken: string;
  readonly expiresIn: number;
}

/** docs/reference/auth.md: a table that is not an auth table, or none, is 404. */
export function authTableOf(model: ProjectModel, table: unknown): CollectionModel {
  const c = typeof table === 'string' ? model.collections.get(table) : undefined;
  if (!c?.auth) throw new ApiError('NOT_FOUND', 'No auth table by that name');
  return c;
}

/** Reset and verification tokens work only while the row's email is the address they were sent to (docs/reference/auth.md). */
function boundUser(user: Row | null, record: { email: string | null }): Row {
  if (!user || user.email !== record.email) throw new ApiError('INVALID_CONFIRMATION_TOKEN');
  return user;
}

export function createAuthFlows(rt: Runtime, auth: AuthServices) {
  const hooks = (c: CollectionModel | undefined) => c?.auth?.options.authHooks;
  const sendInBackground = (send: () => Promise<void>) => void send().catch((err) => rt.log.error({ err }, 'auth email not sent'));

  async function sign(c: CollectionModel, user: Row, sessionId: string) {
    const claims = c.auth!.options.claims ? await c.auth!.options.claims(user as never) : undefined;
    return auth.tokens.sign({ user: { id: user.id }, table: c.name, isAdmin: c.auth!.admin, sessionId, customClaims: claims });
  }

  /** Signs the access token and starts a session: the answer of sign-up and sign-in (sign-in.ts, shared with OTP, magic links, OAuth). */
  const issue = (c: CollectionModel, user: Row): Promise<{ answer: AuthSession; jwt: Jwt }> => issueTokens({ rt, auth }, c, user);

  return {
    async signUp(c: CollectionModel, body: { email: unknown; password: unknown; object?: unknown }): Promise<AuthSession> {
      const email = normalizeEmail(body.email, '/email');
      const password = auth.passwords.validate(body.password);
      const object = (typeof body.object === 'object' && body.object !== null ? body.object : {}) as Record<string, unknown>;
      for (const k of Object.keys(object)) if (!c.auth!.signUpFields.includes(k)) throw badRequest(`/object/${k}`, `"${k}" cannot be set at sign-up`);
      const fields = checkCreateObject(c, object, '/object');
      const hash = await auth.passwords.hash(password); //                                4
      const [user] = await createTrusted(rt, c, [{ ...fields, email, password: hash }]);
      const { answer, jwt } = await issue(c, user!);
      const onSignUp = hooks(c)?.onSignUp;
      if (onSignUp) await runHook(rt, jwt, 'auth hook', (ctx) => onSignUp(ctx, user as never, { method: 'password' })); // 6
      return answer;
    },

    async signIn(c: CollectionModel, body: { email: string; password: string }): Promise<AuthSession> {
      let email: string | null;
      try {
        email = normalizeEmail(body.email, '/email');
      } catch {
        email = null;
      }
      // Same answer and comparable time for an unknown email and a wrong password (docs/reference/conventions.md).
      const found = email ? await findCredentials(rt, c, email) : null;
      // An account created without a password (OTP, magic link, OAuth) costs the same dummy verify.
      const ok =
        found && found.hash !== NO_PASSWORD && passwordWithinBounds(body.password, 1, 1024)
          ? await auth.passwords.verify(found.hash, body.password)
          : await auth.passwords.verifyDummy(body.password.slice(0, 1024));
      if (!ok || !found) throw new ApiError('INVALID_CREDENTIALS');
      const user = await findUser(rt, c, 'id', found.id);
      if (!user) throw new ApiError('INVALID_CREDENTIALS');
      if ((await c.auth!.options.authRules!.canSignIn!(user as never)) !== true) throw new ApiError('FORBIDDEN');
      const { answer, jwt } = await issue(c, user);
      const onSignIn = hooks(c)?.onSignIn;
      if (onSignIn) await runHook(rt, jwt, 'auth hook', (ctx) => onSignIn(ctx, user as never, { method: 'password' }));
      return answer;
    },

    async refresh(refreshToken: string): Promise<AuthSession> {
      const r = await auth.sessions.refresh(refreshToken);
      const c = rt.model.collections.get(r.table);
      const user = c?.auth ? await findUser(rt, c, 'id', r.userId) : null;
      if (!c || !user) {
        await auth.sessions.logout(r.sessionId);
        throw new ApiError('INVALID_TOKEN');
      }
      const { token, expiresIn } = await sign(c, user, r.sessionId);
      const onRefresh = hooks(c)?.onRefresh;
      if (onRefresh) await runHook(rt, claimsOf(token), 'auth hook', (ctx) => onRefresh(ctx, user as never));
      return { user, accessToken: token, refreshToken: r.refreshToken, expiresIn };
    },

    /** docs/reference/auth.md: `all` ends every session of the caller, this one included. */
    async logout(jwt: Jwt, all = false): Promise<void> {
      if (all) await auth.sessions.revokeAllForUser({ table: jwt.table, userId: jwt.userId }, 'user');
      else await auth.sessions.logout(sessionIdOf(jwt));
      const onLogout = hooks(rt.model.collections.get(jwt.table))?.onLogout;
      if (onLogout) await runHook(rt, jwt, 'auth hook', (ctx) => onLogout(ctx, { id: jwt.userId }));
    },

    /** Sends (or resends) the verification email; the same answer whether or not the address is known. */
    async verifyEmail(c: CollectionModel, address: unknown): Promise<void> {
      const email = normalizeEmail(address, '/email');
      const user = await findUser(rt, c, 'email', email);
      // Not awaited: an answer that waited for delivery would tell, by its status or its timing,
      // whether the address has an account (docs/reference/auth.md).
      if (user && user.isVerified !== true) sendInBackground(() => rt.email!.sendVerification({ id: user.id, email }, c.name));
    },

    /** The same answer whether or not the address exists; `canPasswordReset` may silently suppress it (docs/reference/auth.md). */
    async resetPassword(c: CollectionModel, address: unknown): Promise<void> {
      const email = normalizeEmail(address, '/email');
      const allowed = (await c.auth!.options.authRules?.canPasswordReset?.({ email })) === true;
      const user = allowed ? await findUser(rt, c, 'email', email) : null;
      if (user) sendInBackground(() => rt.email!.sendPasswordReset({ id: user.id, email }, c.name));
    },

    async confirmVerifyEmail(token: unknown): Promise<void> {
      await rt.writer.submit(async (tx, changes) => {
        const record = await auth.confirmTokens.consume('verify', token, tx);
        const c = rt.model.collections.get(record.table);
        const user = boundUser(c?.auth ? await findUser(rt, c, 'id', record.userId, tx) : null, record);
        await setUserColumns(rt, tx, c!, user.id, { isVerified: true }, changes);
      });
    },

    async confirmResetPassword(token: unknown, newPassword: unknown): Promise<void> {
      const password = auth.passwords.validate(newPassword, '/newPassword');
      // Cheap checks first (docs/reference/auth.md): an unknown token is refused before the password is hashed.
      await auth.confirmTokens.peek('reset', token, rt.driver);
      const hash = await auth.passwords.hash(password);
      await rt.writer.submit(async (tx, changes) => {
        const record = await auth.confirmTokens.consume('reset', token, tx);
        const c = rt.model.collections.get(record.table);
        boundUser(c?.auth ? await findUser(rt, c, 'id', record.userId, tx) : null, record);
        // Also how an account created without a password (OTP, magic link, OAuth) gets one.
        await setUserColumns(rt, tx, c!, record.userId, { password: hash }, changes);
        await auth.sessions.revokeAllForUser({ table: c!.name, userId: record.userId }, 'reset', tx);
      });
    },
  };
}

export type AuthFlows = ReturnType<typeof createAuthFlows>;
