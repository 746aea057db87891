/**
 * End-to-end passwordless sign-in and the account lifecycle on the conformance project (docs/reference/auth.md,
 * docs/reference/conformance.md): one-time codes and magic links through the outbox folder and through real SMTP,
 * change of email, logout everywhere, and a password set later by a reset.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, startServer, type Reply, type TestServer } from './helpers/server.js';
import { startSmtp, type TestSmtp } from './helpers/smtp.js';

let seq = 0;
const uniqueEmail = (tag: string) => `${tag}.${Date.now().toString(36)}.${++seq}@example.com`;
const expectError = (r: Reply, status: number, code: string) => {
  expect(r.status, r.text).toBe(status);
  expect(r.json.error.code).toBe(code);
};
const expectEmpty200 = (r: Reply) => {
  expect(r.status, r.text).toBe(200);
  expect(r.text).toBe('');
};
const linkToken = (text: string | undefined, kind: string) => {
  const m = new RegExp(`http://localhost/${kind}\\?token=([A-Za-z0-9_-]+)`).exec(text ?? '');
  if (!m) throw new Error(`no ${kind} link in: ${text}`);
  return m[1]!;
};
const codeIn = (text: string | undefined) => {
  const m = /\b(\d{6})\b/.exec(text ?? '');
  if (!m) throw new Error(`no code in: ${text}`);
  return m[1]!;
};
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const OTP = 'Your sign-in code';
const MAGIC = 'Your sign-in link';
const CHANGE = 'Confirm your new email address';
const RESET = 'Reset your password';

interface Mail {
  to: string[];
  subject: string;
  text?: string;
}

describe('through the outbox folder', { timeout: 180_000 }, () => {
  let s: TestServer;
  const outbox = (): Mail[] => {
    const dir = join(s.dataDir, 'outbox');
    if (!existsSync(dir)) return [];
    return readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .sort()
      .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')));
  };
  const mails = (to: string, subject: string) => outbox().filter((m) => m.to.includes(to) && m.subject === subject);
  const waitForMail = async (to: string, subject: string, nth = 1): Promise<Mail> => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const found = mails(to, subject);
      if (found.length >= nth) return found[nth - 1]!;
      if (Date.now() > deadline) throw new Error(`no email "${subject}" #${nth} to ${to}`);
      await pause(50);
    }
  };
  const post = (path: string, body: unknown, headers?: Record<string, string>) => s.call('POST', path, body, headers);
  const sendOtp = (email: string) => post('/auth/otp/send', { type: 'sendOtp', table: 'users', email });
  const verifyOtp = (email: string, code: string) => post('/auth/otp/verify', { type: 'verifyOtp', table: 'users', email, code });
  const signUp = (email: string, password = 'a-good-password-1') => post('/auth/sign-up', { type: 'signUp', table: 'users', email, password });
  const me = (token: string, id: string) => s.get('/db', { table: 'users', where: { id: { eq: id } } }, bearer(token));

  beforeAll(async () => {
    s = await startServer();
  }, 180_000);
  afterAll(() => s?.dispose());

  it('OTP: a 6-digit code by email signs in once; otp.signUp creates a verified row with no password', async () => {
    const email = uniqueEmail('otp');
    expectEmpty200(await sendOtp(email));
    const code = codeIn((await waitForMail(email, OTP)).text);
    const r = await verifyOtp(email, code);
    expect(r.status, r.text).toBe(200);
    expect(Object.keys(r.json.data).sort()).toEqual(['accessToken', 'expiresIn', 'refreshToken', 'user']);
    expect(r.json.data.user).toMatchObject({ email, isVerified: true });
    expect(r.json.data.user.password).toBeUndefined();
    expect((await me(r.json.data.accessToken, r.json.data.user.id)).json.data.isVerified).toBe(true);
    expectError(await verifyOtp(email, code), 401, 'INVALID_CREDENTIALS');
    // No password was set.
    expectError(await post('/auth/sign-in', { type: 'signIn', table: 'users', email, password: 'a-good-password-1' }), 401, 'INVALID_CREDENTIALS');
  });

  it('OTP: a known address signs into its own row; a new send replaces the old code', async () => {
    const email = uniqueEmail('otp-known');
    const up = (await signUp(email)).json.data;
    await sendOtp(email);
    const first = codeIn((await waitForMail(email, OTP)).text);
    await sendOtp(email);
    const second = codeIn((await waitForMail(email, OTP, 2)).text);
    if (first !== second) expectError(await verifyOtp(email, first), 401, 'INVALID_CREDENTIALS');
    const r = await verifyOtp(email, second);
    expect(r.status, r.text).toBe(200);
    expect(r.json.data.user.id).toBe(up.user.id);
    expect(r.json.data.user.isVerified).toBe(true);
  });

  it('OTP: 5 wrong tries kill the code even if the right one follows', async () => {
    const email = uniqueEmail('otp-brute');
    await sendOtp(email);
    const code = codeIn((await waitForMail(email, OTP)).text);
    const wrong = String((Number(code) + 1) % 1e6).padStart(6, '0');
    for (let i = 0; i < 5; i++) expectError(await verifyOtp(email, wrong), 401, 'INVALID_CREDENTIALS');
    expectError(await verifyOtp(email, code), 401, 'INVALID_CREDENTIALS');
  });

  it('OTP: bad bodies are 400, a table without OTP is 404', async () => {
    expectError(await post('/auth/otp/send', { type: 'verifyOtp', table: 'users', email: 'a@b.co' }), 400, 'BAD_REQUEST');
    expectError(await post('/auth/otp/send', { type: 'sendOtp', table: 'users', email: 'a@b.co', extra: 1 }), 400, 'BAD_REQUEST');
    expectError(await post('/auth/otp/send', { type: 'sendOtp', table: 'admins', email: 'a@b.co' }), 404, 'NOT_FOUND');
    expectError(await post('/auth/otp/send', { type: 'sendOtp', table: 'tasks', email: 'a@b.co' }), 404, 'NOT_FOUND');
    expectError(await post('/auth/magic-link', { type: 'sendMagicLink', table: 'admins', email: 'a@b.co' }), 404, 'NOT_FOUND');
  });

  it('magic link: a known address gets a single-use link; an unknown one gets the same answer and no mail', async () => {
    const email = uniqueEmail('magic');
    const up = (await signUp(email)).json.data;
    expectEmpty200(await post('/auth/magic-link', { type: 'sendMagicLink', table: 'users', email }));
    const token = linkToken((await waitForMail(email, MAGIC)).text, 'magic');
    const r = await post('/auth/confirm', { type: 'confirmMagicLink', token });
    expect(r.status, r.text).toBe(200);
    expect(r.json.data.user).toMatchObject({ id: up.user.id, isVerified: true });
    expect((await me(r.json.data.accessToken, up.user.id)).status).toBe(200);
    expectError(await post('/auth/confirm', { type: 'confirmMagicLink', token }), 400, 'INVALID_CONFIRMATION_TOKEN');
    expectError(await post('/auth/confirm', { type: 'confirmMagicLink', token: 'x'.repeat(43) }), 400, 'INVALID_CONFIRMATION_TOKEN');

    const nobody = uniqueEmail('magic-nobody');
    expectEmpty200(await post('/auth/magic-link', { type: 'sendMagicLink', table: 'users', email: nobody }));
    await pause(500);
    expect(outbox().filter((m) => m.to.includes(nobody))).toHaveLength(0);
  });

  it('change of email: a link to the new address; confirming sets it verified; tokens sent to the old address die', async () => {
    const old = uniqueEmail('change-old');
    const next = uniqueEmail('change-new');
    const up = (await signUp(old)).json.data;
    expectEmpty200(await post('/auth/reset-password', { type: 'sendResetPassword', table: 'users', email: old }));
    const reset = linkToken((await waitForMail(old, RESET)).text, 'reset');
    expectError(await post('/auth/change-email', { type: 'sendChangeEmail', newEmail: next }), 401, 'UNAUTHENTICATED');
    expectEmpty200(await post('/auth/change-email', { type: 'sendChangeEmail', newEmail: next }, bearer(up.accessToken)));
    const token = linkToken((await waitForMail(next, CHANGE)).text, 'change-email');
    expect(mails(old, CHANGE)).toHaveLength(0);
    expectEmpty200(await post('/auth/confirm', { type: 'confirmEmailChange', token }));
    expect((await me(up.accessToken, up.user.id)).json.data).toMatchObject({ email: next, isVerified: true });
    expectError(await post('/auth/confirm', { type: 'confirmEmailChange', token }), 400, 'INVALID_CONFIRMATION_TOKEN');
    // The reset link went to the old address: it no longer works.
    expectError(await post('/auth/confirm', { type: 'confirmResetPassword', token: reset, newPassword: 'another-password-2' }), 400, 'INVALID_CONFIRMATION_TOKEN');
    expect((await post('/auth/sign-in', { type: 'signIn', table: 'users', email: next, password: 'a-good-password-1' })).status).toBe(200);
  });

  it('change of email to a taken address: 409 at confirm, nothing changes', async () => {
    const a = uniqueEmail('taken-a');
    const b = uniqueEmail('taken-b');
    const up = (await signUp(a)).json.data;
    await signUp(b);
    expectEmpty200(await post('/auth/change-email', { type: 'sendChangeEmail', newEmail: b }, bearer(up.accessToken)));
    const token = linkToken((await waitForMail(b, CHANGE)).text, 'change-email');
    expectError(await post('/auth/confirm', { type: 'confirmEmailChange', token }), 409, 'CONFLICT');
    expect((await me(up.accessToken, up.user.id)).json.data.email).toBe(a);
  });

  it('logout {all: true} ends every session of the caller', async () => {
    const email = uniqueEmail('logout-all');
    const one = (await signUp(email)).json.data;
    const two = (await post('/auth/sign-in', { type: 'signIn', table: 'users', email, password: 'a-good-password-1' })).json.data;
    const other = (await signUp(uniqueEmail('bystander'))).json.data;
    expect((await post('/auth/logout', { all: 'yes' }, bearer(one.accessToken))).status).toBe(400);
    const r = await post('/auth/logout', { all: true }, bearer(one.accessToken));
    expect(r.status, r.text).toBe(204);
    for (const t of [one, two]) {
      expectError(await me(t.accessToken, one.user.id), 401, 'INVALID_TOKEN');
      expectError(await post('/auth/refresh', { refreshToken: t.refreshToken }), 401, 'INVALID_TOKEN');
    }
    expect((await me(other.accessToken, other.user.id)).status).toBe(200);
  });

  it('a reset gives a password to an account created without one', async () => {
    const email = uniqueEmail('otp-then-password');
    await sendOtp(email);
    expect((await verifyOtp(email, codeIn((await waitForMail(email, OTP)).text))).status).toBe(200);
    await post('/auth/reset-password', { type: 'sendResetPassword', table: 'users', email });
    const token = linkToken((await waitForMail(email, RESET)).text, 'reset');
    expectEmpty200(await post('/auth/confirm', { type: 'confirmResetPassword', token, newPassword: 'now-i-have-one-1' }));
    expect((await post('/auth/sign-in', { type: 'signIn', table: 'users', email, password: 'now-i-have-one-1' })).status).toBe(200);
  });

  it('a confirm with an unknown token is refused before the password is looked at', async () => {
    expectError(await post('/auth/confirm', { type: 'confirmResetPassword', token: 'y'.repeat(43), newPassword: 'p'.repeat(1024) }), 400, 'INVALID_CONFIRMATION_TOKEN');
  });
});

describe('through real SMTP', { timeout: 180_000 }, () => {
  let s: TestServer;
  let smtp: TestSmtp;
  beforeAll(async () => {
    smtp = await startSmtp();
    s = await startServer({ env: { SMTP_URL: smtp.url } });
  }, 180_000);
  afterAll(async () => {
    await s?.dispose();
    await smtp?.close();
  });

  it('an OTP code and a magic link arrive by SMTP and sign in', async () => {
    const email = uniqueEmail('smtp');
    expectEmpty200(await s.call('POST', '/auth/otp/send', { type: 'sendOtp', table: 'users', email }));
    const mail = await smtp.waitFor((m) => m.rcptTo.includes(email));
    expect(mail.html).toContain(codeIn(mail.text));
    const r = await s.call('POST', '/auth/otp/verify', { type: 'verifyOtp', table: 'users', email, code: codeIn(mail.text) });
    expect(r.status, r.text).toBe(200);
    expectEmpty200(await s.call('POST', '/auth/magic-link', { type: 'sendMagicLink', table: 'users', email }));
    const link = await smtp.waitFor((m) => m.rcptTo.includes(email) && /magic\?token=/.test(m.text ?? ''));
    const c = await s.call('POST', '/auth/confirm', { type: 'confirmMagicLink', token: linkToken(link.text, 'magic') });
    expect(c.status, c.text).toBe(200);
    expect(c.json.data.user.id).toBe(r.json.data.user.id);
  });
});
