/**
 * End-to-end: password sign-up and sign-in on the conformance project (docs/reference/auth.md, docs/reference/conformance.md): the
 * answer's shape, the refusals (as a scenario table), and one identical 401 for every failed
 * sign-in.
 */
import { describe, expect, it } from 'vitest';
import { expectError } from '../helpers/expect.js';
import { useServer } from '../helpers/lifecycle.js';
import { countRows } from '../helpers/rows.js';
import { scenarios, type Scenario, type ScenarioContext } from '../helpers/scenario.js';
import { bearer } from '../helpers/server.js';
import { signInReply, signUpReply, uniqueEmail } from '../helpers/users.js';

const PW = 'correct horse 1';
const s = useServer();
const ctx: ScenarioContext = { server: s, who: {}, vars: {} };
const signUp = (email: string, password = PW, extra: Record<string, unknown> = {}) => signUpReply(s, email, { password, extra });
const ownRow = (token: string, id: string) => s.get('/db', { table: 'users', where: { id: { eq: id } } }, bearer(token));
/** No password or hash in any answer. */
const SECRETISH = /password|argon2/i;

describe('sign-up', () => {
  it('answers {user, accessToken, refreshToken, expiresIn} with the camelCase row and no password', async () => {
    const email = uniqueEmail('Shape');
    const r = await signUp(`  ${email.toUpperCase()} `, PW, { object: { displayName: 'Ann' } });
    expect(r.status, r.text).toBe(200);
    const d = r.json.data;
    expect(Object.keys(d).sort()).toEqual(['accessToken', 'expiresIn', 'refreshToken', 'user']);
    expect(Object.keys(d.user).sort()).toEqual(['createdAt', 'displayName', 'email', 'id', 'isVerified', 'plan', 'updatedAt']);
    expect(d.user).toMatchObject({ email: email.toLowerCase(), isVerified: false, displayName: 'Ann', plan: 'free' });
    expect(d.user.id).toMatch(/^us_[0-9a-z]{16,32}$/);
    expect(d.user.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(typeof d.accessToken).toBe('string');
    expect(d.refreshToken).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(d.expiresIn).toBe(3600);
    expect(r.text).not.toMatch(SECRETISH);
    // The token is immediately usable.
    expect((await ownRow(d.accessToken, d.user.id)).json.data).toEqual(d.user);
  });

  it('400s for object fields outside signUpFields, and creates nothing', async () => {
    const before = await countRows(s, 'users');
    for (const object of [{ plan: 'pro' }, { isVerified: true }, { displayName: 'x', id: 'us_0000000000000000' }, { nope: 1 }, { displayName: 5 }]) {
      expectError(await signUp(uniqueEmail('fields'), PW, { object }), 400, 'BAD_REQUEST');
    }
    expect(await countRows(s, 'users')).toBe(before);
  });
});

const signUpAs = (name: string, body: Record<string, unknown>, status: number, code?: string): Scenario => ({
  name,
  method: 'POST',
  path: '/auth/sign-up',
  body: { type: 'signUp', table: 'users', password: PW, ...body },
  status,
  ...(code ? { code } : {}),
});
const taken = uniqueEmail('taken');

scenarios('sign-up refusals', ctx, [
  signUpAs('a first sign-up takes the email', { email: taken }, 200),
  signUpAs('409 on a taken email', { email: taken, password: 'another password' }, 409, 'CONFLICT'),
  signUpAs('409 when it differs only in case and whitespace', { email: `\t ${taken.toUpperCase()}  `, password: 'another password' }, 409, 'CONFLICT'),
  signUpAs('400 for the wrong type', { email: uniqueEmail('type'), type: 'signIn' }, 400, 'BAD_REQUEST'),
  signUpAs('400 for no type', { email: uniqueEmail('type'), type: undefined }, 400, 'BAD_REQUEST'),
  signUpAs('400 for a bad email', { email: 'not-an-email' }, 400, 'BAD_REQUEST'),
  signUpAs('400 for a password under 8 characters', { email: uniqueEmail('short'), password: '7chars!' }, 400, 'BAD_REQUEST'),
  signUpAs('400 for a password over 1024 characters', { email: uniqueEmail('long'), password: 'x'.repeat(1025) }, 400, 'BAD_REQUEST'),
  signUpAs('8 characters are enough', { email: uniqueEmail('min'), password: '8chars!!' }, 200),
  signUpAs('403 for admins: the table exists but its canSignUp denies', { table: 'admins', email: uniqueEmail('adm') }, 403, 'FORBIDDEN'),
]);

/** Every auth route answers 404 for a table that is not an auth table, an unknown table, or none (docs/reference/auth.md). */
const notAuthTables: [string, Record<string, unknown>][] = [
  ['a table', { table: 'tasks' }],
  ['a view', { table: 'task_board' }],
  ['an unknown table', { table: 'nope' }],
  ['no table', { table: undefined }],
];
scenarios(
  'auth routes on tables that are not auth tables',
  ctx,
  notAuthTables.flatMap(([what, extra]): Scenario[] => {
    const email = uniqueEmail('nt');
    const at = (path: string, body: object): Scenario => ({ name: `404 for ${what}`, method: 'POST', path, body: { ...body, ...extra }, status: 404, code: 'NOT_FOUND' });
    return [
      at('/auth/sign-up', { type: 'signUp', email, password: PW }),
      at('/auth/sign-in', { type: 'signIn', email, password: PW }),
      at('/auth/verify-email', { email }),
      at('/auth/reset-password', { type: 'sendResetPassword', email }),
    ];
  }),
);

describe('sign-in', () => {
  it('answers the same shape as sign-up, normalizing the email', async () => {
    const email = uniqueEmail('In');
    const up = (await signUp(email)).json.data;
    const r = await signInReply(s, 'users', `  ${email.toUpperCase()}`, PW);
    expect(r.status, r.text).toBe(200);
    expect(r.json.data.user).toEqual(up.user);
    expect(r.json.data.expiresIn).toBe(3600);
    expect(r.json.data.refreshToken).not.toBe(up.refreshToken);
    expect(r.text).not.toMatch(SECRETISH);
  });

  it('answers one identical 401 body for an unknown email and a wrong password', async () => {
    const email = uniqueEmail('cred');
    await signUp(email);
    const wrong = await signInReply(s, 'users', email, 'correct horse 2');
    const unknown = await signInReply(s, 'users', uniqueEmail('ghost'), PW);
    const notEmail = await signInReply(s, 'users', 'not-an-email', PW);
    const huge = await signInReply(s, 'users', email, 'x'.repeat(5000));
    expectError(wrong, 401, 'INVALID_CREDENTIALS');
    for (const r of [unknown, notEmail, huge]) {
      expect(r.status).toBe(401);
      expect(r.text).toBe(wrong.text);
      expect(r.headers.get('content-type')).toBe(wrong.headers.get('content-type'));
    }
  });
});

scenarios('sign-in refusals', ctx, [
  { name: '400 for the wrong type', method: 'POST', path: '/auth/sign-in', body: { table: 'users', email: uniqueEmail('t'), type: 'signUp', password: PW }, status: 400, code: 'BAD_REQUEST' },
  { name: '400 for a missing password', method: 'POST', path: '/auth/sign-in', body: { table: 'users', email: uniqueEmail('t'), type: 'signIn' }, status: 400, code: 'BAD_REQUEST' },
]);
