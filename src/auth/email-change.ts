/**
 * Changing an account's email (docs/reference/auth.md): never through `/db`, only by proving the new address —
 * `sendChangeEmail` mails a single-use link (template `changeEmail`, 1 hour) to the new address,
 * and `confirmEmailChange` sets it with `isVerified` true. Reset and verification tokens bound
 * to the old address stop working at that moment (they are checked against the row's email).
 */
import { ApiError, badRequest } from '../core/errors.js';
import type { Jwt } from '../define/types.js';
import { normalizeEmail } from '../pipeline/plan/values.js';
import type { PasswordlessDeps } from './passwordless.js';
import type { SignInDeps } from './sign-in.js';
import { findUser, setUserColumns } from './users.js';

/** The confirm half, for the route's description. */
export const confirmEmailChangeSchemaNote =
  'Confirm with POST /auth/confirm `{"type": "confirmEmailChange", "token"}`: the email becomes the new one and isVerified true; 409 when the address was taken meanwhile.';

/**
 * Checks the request and answers the work to do after the answer (sending in the background, so
 * whether the new address is taken does not show in the answer or its timing).
 */
export async function sendChangeEmail(d: PasswordlessDeps, jwt: Jwt, newEmail: unknown): Promise<() => Promise<void>> {
  const email = normalizeEmail(newEmail, '/newEmail');
  const c = d.rt.model.collections.get(jwt.table);
  const user = c?.auth ? await findUser(d.rt, c, 'id', jwt.userId) : null;
  if (!c || !user) throw new ApiError('INVALID_TOKEN');
  if (user.email === email) throw badRequest('/newEmail', 'is already the account email');
  return async () => {
    const { token } = await d.auth.confirmTokens.issue('changeEmail', { table: c.name, userId: user.id, email });
    await d.email.sendChangeEmail(email, token);
  };
}

/** `confirmEmailChange`: 400 INVALID_CONFIRMATION_TOKEN for a bad token, 409 CONFLICT when the address was taken meanwhile. */
export async function confirmEmailChange(d: SignInDeps, token: unknown): Promise<void> {
  const rt = d.rt;
  await rt.writer.submit(async (tx, changes) => {
    const record = await d.auth.confirmTokens.consume('changeEmail', token, tx);
    const c = rt.model.collections.get(record.table);
    if (!c?.auth || record.email === null) throw new ApiError('INVALID_CONFIRMATION_TOKEN');
    const taken = await findUser(rt, c, 'email', record.email, tx);
    if (taken && taken.id !== record.userId) throw new ApiError('CONFLICT', 'That email address is taken');
    if (!(await setUserColumns(rt, tx, c, record.userId, { email: record.email, isVerified: true }, changes))) throw new ApiError('INVALID_CONFIRMATION_TOKEN');
  });
}
