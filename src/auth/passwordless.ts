/**
 * Passwordless sign-in (docs/reference/auth.md): one-time codes and magic links by email. Services: they take
 * values and return values (the routes in http/ call them).
 *
 * Sending happens in the background: the route answers before the address is even looked up, so
 * a known and an unknown address get the same answer in the same time, and a slow mail server
 * never holds a request. Codes and link tokens are stored hashed, single-use and expiring
 * (otp.ts, confirm-tokens.ts).
 */
import { ApiError } from '../core/errors.js';
import type { CollectionModel } from '../core/model.js';
import type { Runtime } from '../core/runtime.js';
import type { OtpOptions } from '../define/signin.js';
import type { EmailService } from '../email/index.js';
import { completeSignIn, createVerifiedUser, mayCreate, type SignInAnswer, type SignInDeps } from './sign-in.js';
import { findUser } from './users.js';

export interface PasswordlessDeps extends SignInDeps {
  readonly email: EmailService;
}

/** The table's OTP options, or 404 when it has not enabled OTP (docs/reference/auth.md). */
export function otpOf(c: CollectionModel): OtpOptions {
  const o = c.auth?.options.otp;
  if (!o) throw new ApiError('NOT_FOUND', 'This table does not sign in with one-time codes');
  return o === true ? {} : o;
}

/** 404 unless the table has enabled magic links. */
export function requireMagicLink(c: CollectionModel): void {
  if (c.auth?.options.magicLink !== true) throw new ApiError('NOT_FOUND', 'This table does not sign in with magic links');
}

/** Runs `work` after the answer; its failure is logged without the address. */
export function inBackground(rt: Runtime, what: string, work: () => Promise<unknown>): void {
  setImmediate(() => {
    work().catch((err) => rt.log.error({ err: { name: (err as Error)?.name, message: (err as Error)?.message }, what }, 'auth email not sent'));
  });
}

/** Emails a fresh code to a known address, or to an unknown one when `otp.signUp` and `canSignUp` allow. */
export async function sendOtp(d: PasswordlessDeps, c: CollectionModel, email: string): Promise<boolean> {
  const user = await findUser(d.rt, c, 'email', email);
  if (!user && !(otpOf(c).signUp === true && (await mayCreate(c, email)))) return false;
  const { code } = await d.auth.otp.issue(c.name, email);
  await d.email.sendOtp(email, code);
  return true;
}

/** Signs in with a code; a wrong, expired, used or dead code is 401 INVALID_CREDENTIALS. */
export async function verifyOtp(d: PasswordlessDeps, c: CollectionModel, email: string, code: unknown): Promise<SignInAnswer> {
  const opts = otpOf(c);
  // Not inside a larger job: a wrong try must stay counted even when the answer is an error.
  if (!(await d.auth.otp.verify(c.name, email, code))) throw new ApiError('INVALID_CREDENTIALS', 'Invalid or expired code');
  let user = await findUser(d.rt, c, 'email', email);
  let created = false;
  if (!user) {
    if (opts.signUp !== true || !(await mayCreate(c, email))) throw new ApiError('INVALID_CREDENTIALS', 'Invalid or expired code');
    user = await createVerifiedUser(d.rt, c, email);
    created = true;
  }
  return completeSignIn(d, c, user, { method: 'otp' }, created);
}

/** Emails a single-use sign-in link to a known address; nothing for an unknown one. */
export async function sendMagicLink(d: PasswordlessDeps, c: CollectionModel, email: string): Promise<boolean> {
  const user = await findUser(d.rt, c, 'email', email);
  if (!user) return false;
  const { token } = await d.auth.confirmTokens.issue('magic', { table: c.name, userId: user.id, email });
  await d.email.sendMagicLink(email, token);
  return true;
}

/** `confirmMagicLink`: an unknown, used or expired token, or one sent to a former address, is 400 INVALID_CONFIRMATION_TOKEN. */
export async function confirmMagicLink(d: SignInDeps, token: unknown): Promise<SignInAnswer> {
  const record = await d.auth.confirmTokens.consume('magic', token);
  const c = d.rt.model.collections.get(record.table);
  const user = c?.auth?.options.magicLink === true ? await findUser(d.rt, c, 'id', record.userId) : null;
  if (!c || !user || user.email !== record.email) throw new ApiError('INVALID_CONFIRMATION_TOKEN');
  return completeSignIn(d, c, user, { method: 'magicLink' }, false);
}
