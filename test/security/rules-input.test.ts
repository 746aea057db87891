/**
 * Issue #26 items 4 and 8, against test/fixtures/hostile: rules see the email as it will be stored
 * (`x@MAILINATOR.com` passed a rule refusing `@mailinator.com`), addresses with bidi or zero-width
 * characters are refused, and a rule that receives the operation's `where` closes the count side
 * channel of a row-filtered table (before, `count` with a `where` on another user's rows answered).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scenarios, type Scenario, type ScenarioContext } from '../helpers/scenario.js';
import { bearer, ROOT, startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
const ctx: ScenarioContext = { server: null as unknown as TestServer, who: {}, vars: {} };
const signUp = (email: unknown) => s.call('POST', '/auth/sign-up', { type: 'signUp', table: 'people', email, password: 'a long password' });
/** One sign-up to the hostile project's `people` table, as a scenario row. */
const signUpRow = (name: string, body: object, status: number, rest: Partial<Scenario> = {}): Scenario => ({
  name,
  method: 'POST',
  path: '/auth/sign-up',
  body: { type: 'signUp', table: 'people', password: 'a long password', ...body },
  status,
  // Every refusal here is one of the catalog's codes, never a 500's INTERNAL.
  ...(status === 403 ? { code: 'FORBIDDEN' } : status === 400 ? { code: 'BAD_REQUEST' } : {}),
  ...rest,
});

beforeAll(async () => {
  s = await startServer({ project: join(ROOT, 'test/fixtures/hostile'), env: { LOG_LEVEL: 'warn' } });
  ctx.server = s;
}, 120_000);
afterAll(async () => {
  await s?.dispose();
});

describe('rules see normalized input (issue #26)', () => {
  // canSignUp gets the email trimmed and lowercased: a refused domain in capitals is still refused.
  scenarios('canSignUp sees the stored form of the email', ctx, [
    signUpRow('a refused domain in capitals', { email: 'x@MAILINATOR.com' }, 403),
    signUpRow('a refused domain in mixed case with spaces', { email: '  y@Mailinator.COM  ' }, 403),
    signUpRow('an allowed domain in capitals with spaces', { email: '  Fine@Example.COM ' }, 200),
  ]);

  scenarios(
    'bidi-control and zero-width characters in an address are 400 at sign-up',
    ctx,
    ['ann\u202e@example.com', 'a\u200bnn@example.com', 'ann@exa\u2066mple.com', 'ann@exam\ufeffple.com'].map((email) =>
      signUpRow(JSON.stringify(email), { email }, 400, { after: async (r) => expect(r.json.error?.details?.[0]?.path).toBe('/email') }),
    ),
  );

  it('bidi-control and zero-width characters are 400 at email change', async () => {
    const ok = await signUp('changer@example.com');
    const auth = bearer(ok.json.data.accessToken);
    const change = await s.call('POST', '/auth/change-email', { newEmail: 'chan\u200dger2@example.com' }, auth);
    expect(change.status, change.text).toBe(400);
  });

  scenarios('a wrong JSON type for email or password is 400, never 500', ctx, [
    signUpRow('an object as the email', { email: { toString: 1 } }, 400),
    signUpRow('an object as the password', { email: 'typed@example.com', password: { toString: 1 } }, 400),
    signUpRow('an array as the email', { email: ['a@b.co'] }, 400),
  ]);
});

describe('rules receive the operation, where included (issue #26)', () => {
  it("canCount requiring ownerId = caller: counting another user's rows by a where is 403, one's own is answered", async () => {
    const ann = bearer((await signUp('ann.diary@example.com')).json.data.accessToken);
    const benReply = await signUp('ben.diary@example.com');
    const ben = bearer(benReply.json.data.accessToken);
    const annId = (await s.call('POST', '/db', { table: 'diary', object: { mood: 'secret-sad' } }, ann)).json.data.ownerId as string;
    // Ben probing Ann's private mood through count: refused whatever the filter, unless scoped to himself.
    const probe = await s.get('/db/count', { table: 'diary', where: { ownerId: { eq: annId }, mood: { startsWith: 'secret' } } }, ben);
    expect(probe.status, probe.text).toBe(403);
    expect((await s.get('/db/count', { table: 'diary', where: { mood: { startsWith: 'secret' } } }, ben)).status).toBe(403);
    const own = await s.get('/db/count', { table: 'diary', where: { ownerId: { eq: benReply.json.data.user.id }, mood: { startsWith: 'secret' } } }, ben);
    expect(own.status, own.text).toBe(200);
    expect(own.json.data).toBe(0);
    const mine = await s.get('/db/count', { table: 'diary', where: { ownerId: { eq: annId } } }, ann);
    expect(mine.json.data).toBe(1);
    // A rule of the operation is not cached per token: the same token gets different answers.
    expect((await s.get('/db/list', { table: 'diary', where: { ownerId: { eq: annId } } }, ann)).status).toBe(200);
    expect((await s.get('/db/list', { table: 'diary' }, ann)).status).toBe(403);
  });
});
