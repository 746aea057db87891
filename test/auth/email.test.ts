/**
 * End-to-end: the auth flows that go through email (docs/reference/auth.md) — verification
 * and password reset through the outbox folder, then a real SMTP delivery — the admin-only routes
 * (`/email`, `/dashboard/metrics`), and the promise that a plaintext password never reaches a
 * response, a log line or any file in the data folder.
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/expect.js';
import { until } from '../helpers/poll.js';
import { scenarios, type Scenario, type ScenarioContext } from '../helpers/scenario.js';
import { bearer, databaseText, startServer, type Envelope, type Reply, type TestServer } from '../helpers/server.js';
import { startSmtp, type TestSmtp } from '../helpers/smtp.js';
import { signInReply, signUpReply, startServerWithAdmin, uniqueEmail } from '../helpers/users.js';

/** Every password in this file carries this marker; the sweep at the end looks for it everywhere. */
const MARK = 'Zq8-PLAIN-wx3';
const pw = (n: string) => `${MARK}-${n}`;
const ADMIN = { email: 'boss@example.com', password: pw('admin') };

const expectEmpty200 = (r: Reply) => {
  expect(r.status, r.text).toBe(200);
  expect(r.text).toBe('');
};
const linkToken = (text: string | null | undefined, kind: 'verify' | 'reset') => {
  const m = new RegExp(`http://localhost/${kind}\\?token=([A-Za-z0-9_-]+)`).exec(text ?? '');
  if (!m) throw new Error(`no ${kind} link in: ${text}`);
  return m[1]!;
};

describe('through the outbox folder', { timeout: 180_000 }, () => {
  let s: TestServer;
  let dataDir: string;
  let cliOutput = '';
  /** Every reply this suite saw, for the plaintext sweep. */
  const replies: string[] = [];
  const call = async <T = Envelope>(method: string, path: string, body?: unknown, headers?: Record<string, string>) => {
    const r = await s.call<T>(method, path, body, headers);
    replies.push(r.text);
    return r;
  };
  const post = (path: string, body: unknown) => call('POST', path, body);
  /** The server, with every reply recorded. */
  const recorded = (): TestServer => ({ ...s, call });
  const signUp = (email: string, password: string) => signUpReply(recorded(), email, { password });
  const signIn = (table: string, email: string, password: string) => signInReply(recorded(), table, email, password);
  const ownRow = (token: string, id: string) => call('GET', `/db?body=${encodeURIComponent(JSON.stringify({ table: 'users', where: { id: { eq: id } } }))}`, undefined, bearer(token));

  interface Mail {
    file: string;
    to: string[];
    subject: string;
    text: string | null;
    html: string | null;
  }
  const outbox = (): Mail[] => {
    const dir = join(dataDir, 'outbox');
    if (!existsSync(dir)) return [];
    const files = readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .sort();
    return files.map((file) => ({ file, ...JSON.parse(readFileSync(join(dir, file), 'utf8')) }));
  };
  /** Polls for the `nth` (1-based) message to `to` with `subject`. */
  const waitForMail = async (to: string, subject: string, nth = 1): Promise<Mail> => {
    const mails = await until(
      async () => outbox().filter((m) => m.to.includes(to) && m.subject === subject),
      (found) => found.length >= nth,
      `email "${subject}" #${nth} to ${to}`,
    );
    return mails[nth - 1]!;
  };
  const mailsTo = (to: string) => outbox().filter((m) => m.to.includes(to));
  const VERIFY = 'Verify your email address';
  const RESET = 'Reset your password';

  /** Scenario rows go through `recorded()`, so their replies join the plaintext sweep too. */
  const ctx: ScenarioContext = { server: null as unknown as TestServer, who: {}, vars: {} };
  const DIRECT = { to: uniqueEmail('direct'), subject: 'Direct note', text: 'hello there' };

  beforeAll(async () => {
    ({ server: s, dataDir, cliOutput } = await startServerWithAdmin(ADMIN, { env: { LOG_LEVEL: 'trace' } }));
    ctx.server = recorded();
    ctx.who = { user: bearer((await signUp(uniqueEmail('refused'), pw('r1'))).json.data.accessToken) };
  }, 120_000);
  afterAll(async () => {
    await s?.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('sign-up sends a verification link; confirming it sets isVerified, once', async () => {
    const email = uniqueEmail('verify');
    const up = (await signUp(email, pw('v1'))).json.data;
    const token = linkToken((await waitForMail(email, VERIFY)).text, 'verify');
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await ownRow(up.accessToken, up.user.id)).json.data.isVerified).toBe(false);
    expectEmpty200(await post('/auth/confirm', { type: 'confirmVerifyEmail', token }));
    expect((await ownRow(up.accessToken, up.user.id)).json.data.isVerified).toBe(true);
    expectError(await post('/auth/confirm', { type: 'confirmVerifyEmail', token }), 400, 'INVALID_CONFIRMATION_TOKEN');
  });

  it('verify-email resends a fresh link; unknown addresses get 200 and nothing', async () => {
    const email = uniqueEmail('resend');
    const up = (await signUp(email, pw('v2'))).json.data;
    const first = linkToken((await waitForMail(email, VERIFY)).text, 'verify');
    expectEmpty200(await post('/auth/verify-email', { table: 'users', email: `  ${email.toUpperCase()} ` }));
    const second = linkToken((await waitForMail(email, VERIFY, 2)).text, 'verify');
    expect(second).not.toBe(first);
    expectEmpty200(await post('/auth/confirm', { type: 'confirmVerifyEmail', token: second }));
    expect((await ownRow(up.accessToken, up.user.id)).json.data.isVerified).toBe(true);
    const ghost = uniqueEmail('ghost');
    expectEmpty200(await post('/auth/verify-email', { table: 'users', email: ghost }));
    expect(mailsTo(ghost)).toEqual([]);
  });

  const confirm = (name: string, body: object, code: string): Scenario => ({ name, method: 'POST', path: '/auth/confirm', body, status: 400, code, lacks: [MARK] });
  scenarios(
    'unknown and malformed confirmation tokens',
    ctx,
    (['A'.repeat(43), 'short', 42, undefined] as const).flatMap((token) => [
      confirm(`verify with token ${String(token)}`, { type: 'confirmVerifyEmail', token }, 'INVALID_CONFIRMATION_TOKEN'),
      confirm(`reset with token ${String(token)}`, { type: 'confirmResetPassword', token, newPassword: pw('n0') }, 'INVALID_CONFIRMATION_TOKEN'),
    ]),
  );
  scenarios('an unknown confirmation type', ctx, [confirm('type "confirm"', { type: 'confirm', token: 'A'.repeat(43) }, 'BAD_REQUEST')]);

  it('refuses a wrong-kind confirmation token without using it up', async () => {
    const email = uniqueEmail('kind');
    await signUp(email, pw('k1'));
    const token = linkToken((await waitForMail(email, VERIFY)).text, 'verify');
    // A verification token is no reset token, and trying it as one does not consume it.
    expectError(await post('/auth/confirm', { type: 'confirmResetPassword', token, newPassword: pw('k2') }), 400, 'INVALID_CONFIRMATION_TOKEN');
    expectEmpty200(await post('/auth/confirm', { type: 'confirmVerifyEmail', token }));
  });

  it('a confirmed reset changes the password and revokes every session; the token works once', async () => {
    const email = uniqueEmail('reset');
    const one = (await signUp(email, pw('old'))).json.data;
    const two = (await signIn('users', email, pw('old'))).json.data;
    expectEmpty200(await post('/auth/reset-password', { type: 'sendResetPassword', table: 'users', email: email.toUpperCase() }));
    const token = linkToken((await waitForMail(email, RESET)).text, 'reset');
    // A rejected new password leaves the token usable.
    expectError(await post('/auth/confirm', { type: 'confirmResetPassword', token, newPassword: 'short' }), 400, 'BAD_REQUEST');
    expect((await ownRow(two.accessToken, two.user.id)).status).toBe(200);
    expectEmpty200(await post('/auth/confirm', { type: 'confirmResetPassword', token, newPassword: pw('new') }));
    for (const session of [one, two]) {
      expectError(await ownRow(session.accessToken, session.user.id), 401, 'INVALID_TOKEN');
      expectError(await post('/auth/refresh', { refreshToken: session.refreshToken }), 401, 'INVALID_TOKEN');
    }
    expectError(await signIn('users', email, pw('old')), 401, 'INVALID_CREDENTIALS');
    const after = await signIn('users', email, pw('new'));
    expect(after.status, after.text).toBe(200);
    expect((await ownRow(after.json.data.accessToken, one.user.id)).status).toBe(200);
    expectError(await post('/auth/confirm', { type: 'confirmResetPassword', token, newPassword: pw('newer') }), 400, 'INVALID_CONFIRMATION_TOKEN');
    expect((await signIn('users', email, pw('new'))).status).toBe(200);
  });

  it('reset-password answers 200 and sends nothing for unknown emails and for admins', async () => {
    const ghost = uniqueEmail('nobody');
    expectEmpty200(await post('/auth/reset-password', { type: 'sendResetPassword', table: 'users', email: ghost }));
    expectEmpty200(await post('/auth/reset-password', { type: 'sendResetPassword', table: 'admins', email: ADMIN.email }));
    // A later message that is sent proves the mailer ran after the two requests above.
    const email = uniqueEmail('sentinel');
    await signUp(email, pw('s1'));
    expectEmpty200(await post('/auth/reset-password', { type: 'sendResetPassword', table: 'users', email }));
    await waitForMail(email, RESET);
    expect(mailsTo(ghost)).toEqual([]);
    expect(mailsTo(ADMIN.email)).toEqual([]);
    expectError(await post('/auth/reset-password', { type: 'resetPassword', table: 'users', email }), 400, 'BAD_REQUEST');
    expect((await signIn('admins', ADMIN.email, ADMIN.password)).status).toBe(200);
  });

  scenarios('the admin-only routes refuse anyone else', ctx, [
    { name: '401 without a token', method: 'POST', path: '/email', body: DIRECT, status: 401, code: 'UNAUTHENTICATED' },
    { name: '403 for a user', method: 'POST', path: '/email', as: 'user', body: DIRECT, status: 403, code: 'FORBIDDEN' },
    { name: '401 without a token', method: 'GET', path: '/dashboard/metrics', status: 401, code: 'UNAUTHENTICATED' },
    { name: '403 for a user', method: 'GET', path: '/dashboard/metrics', as: 'user', status: 403, code: 'FORBIDDEN' },
  ]);

  it('POST /email: 200 {id} for an admin, into the outbox', async () => {
    const admin = (await signIn('admins', ADMIN.email, ADMIN.password)).json.data.accessToken;
    const { to } = DIRECT;
    const msg = DIRECT;
    const r = await call('POST', '/email', msg, bearer(admin));
    expect(r.status, r.text).toBe(200);
    const mail = await waitForMail(to, 'Direct note');
    expect(mail.text).toBe('hello there');
    expect(mail.file).toContain(r.json.data.id);
    expect(mailsTo(to)).toHaveLength(1); // the refused requests sent nothing
  });

  it('/dashboard/metrics: 200 for an admin, with table counts', async () => {
    const admin = (await signIn('admins', ADMIN.email, ADMIN.password)).json.data.accessToken;
    const r = await call<{ data: { tables: Record<string, number> } }>('GET', '/dashboard/metrics', undefined, bearer(admin));
    expect(r.status, r.text).toBe(200);
    expect(r.json.data.tables.users).toBeGreaterThan(0);
    expect(r.json.data.tables.admins).toBe(1);
  });

  it('never puts a plaintext password in a response, a log line or a data file', async () => {
    // Exercise every path that handles a password once more, including the failing ones.
    const email = uniqueEmail('sweep');
    expect((await signUp(email, pw('sweep1'))).status).toBe(200);
    expect((await signUp(email, pw('sweep1'))).status).toBe(409);
    expect((await signIn('users', email, pw('sweep1'))).status).toBe(200);
    expect((await signIn('users', email, pw('wrong'))).status).toBe(401);
    expect((await signIn('users', uniqueEmail('nope'), pw('sweep1'))).status).toBe(401);
    expect((await post('/auth/sign-up', { type: 'signUp', table: 'users', email: uniqueEmail('x'), password: pw('y'), object: { plan: pw('z') } })).status).toBe(400);
    expect((await signIn('admins', ADMIN.email, ADMIN.password)).status).toBe(200);

    const files: string[] = [];
    const walk = (dir: string) => {
      for (const f of readdirSync(dir)) {
        const p = join(dir, f);
        if (statSync(p).isDirectory()) walk(p);
        else files.push(p);
      }
    };
    walk(dataDir);
    const names = files.map((f) => f.slice(dataDir.length + 1));
    // On PostgreSQL the rows live in the database, not in the data folder: sweep its text too.
    const dump = await databaseText(dataDir);
    if (dump === undefined) expect(names).toEqual(expect.arrayContaining(['db.sqlite', 'db.sqlite-wal', 'db.sqlite-shm']));
    expect(names.some((n) => n.startsWith('outbox/'))).toBe(true);
    const needles = [Buffer.from(MARK, 'utf8'), Buffer.from(MARK, 'utf16le')];
    const haystacks = files.map((f) => ({ name: f, bytes: readFileSync(f) }));
    if (dump !== undefined) haystacks.push({ name: 'database', bytes: Buffer.from(dump, 'utf8') });
    // Positive control: the sweep reads where the data lives, so stored text would be found.
    expect(haystacks.some((h) => h.bytes.includes(Buffer.from(email, 'utf8')))).toBe(true);
    for (const h of haystacks) for (const n of needles) expect(h.bytes.includes(n), h.name).toBe(false);

    const log = s.log();
    expect(log).toContain('Tablebase listening');
    expect(log).not.toContain(MARK);
    expect(cliOutput).toContain(ADMIN.email);
    expect(cliOutput).not.toContain(MARK);
    expect(replies.length).toBeGreaterThan(30);
    for (const text of replies) expect(text).not.toContain(MARK);
  });
});

describe('through a real SMTP server', { timeout: 180_000 }, () => {
  let smtp: TestSmtp;
  let s: TestServer;
  beforeAll(async () => {
    smtp = await startSmtp();
    s = await startServer({ env: { SMTP_URL: smtp.url } });
  }, 120_000);
  afterAll(async () => {
    await s?.dispose();
    await smtp?.close();
  });

  it('delivers the verification email with its link, and the token confirms', async () => {
    const email = uniqueEmail('smtp');
    const up = await signUpReply(s, email, { password: 'correct horse 1' });
    expect(up.status, up.text).toBe(200);
    const mail = await smtp.waitFor((m) => m.rcptTo.includes(email));
    expect(mail.headers.get('subject')).toBe('Verify your email address');
    expect(mail.headers.get('to')).toBe(email);
    expect(mail.mailFrom).toBe('no-reply@localhost');
    const token = linkToken(mail.text, 'verify');
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(mail.text).toContain(`http://localhost/verify?token=${token}`);
    expect(mail.html).toContain(`href="http://localhost/verify?token=${token}"`);
    expectEmpty200(await s.call('POST', '/auth/confirm', { type: 'confirmVerifyEmail', token }));
    const row = await s.get('/db', { table: 'users', where: { id: { eq: up.json.data.user.id } } }, bearer(up.json.data.accessToken));
    expect(row.json.data.isVerified).toBe(true);
    // SMTP replaced the outbox folder entirely.
    expect(existsSync(join(s.dataDir, 'outbox')) ? readdirSync(join(s.dataDir, 'outbox')) : []).toEqual([]);
  });

  it('delivers the reset email, whose token sets a new password', async () => {
    const email = uniqueEmail('smtpreset');
    expect((await signUpReply(s, email, { password: 'correct horse 1' })).status).toBe(200);
    expectEmpty200(await s.call('POST', '/auth/reset-password', { type: 'sendResetPassword', table: 'users', email }));
    const mail = await smtp.waitFor((m) => m.rcptTo.includes(email) && m.headers.get('subject') === 'Reset your password');
    const token = linkToken(mail.text, 'reset');
    expectEmpty200(await s.call('POST', '/auth/confirm', { type: 'confirmResetPassword', token, newPassword: 'battery staple 2' }));
    expect((await signInReply(s, 'users', email, 'battery staple 2')).status).toBe(200);
  });
});
