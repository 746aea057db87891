/**
 * Issue #26 items 4 and 8, against test/fixtures/hostile: rules see the email as it will be stored
 * (`x@MAILINATOR.com` passed a rule refusing `@mailinator.com`), addresses with bidi or zero-width
 * characters are refused, and a rule that receives the operation's `where` closes the count side
 * channel of a row-filtered table (before, `count` with a `where` on another user's rows answered).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, ROOT, startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
const signUp = (email: unknown) => s.call('POST', '/auth/sign-up', { type: 'signUp', table: 'people', email, password: 'a long password' });

beforeAll(async () => {
  s = await startServer({ project: join(ROOT, 'test/fixtures/hostile'), env: { LOG_LEVEL: 'warn' } });
}, 120_000);
afterAll(async () => {
  await s?.dispose();
});

describe('rules see normalized input (issue #26)', () => {
  it('canSignUp gets the email trimmed and lowercased: a refused domain in capitals is still refused', async () => {
    for (const email of ['x@MAILINATOR.com', '  y@Mailinator.COM  ']) {
      const r = await signUp(email);
      expect(r.status, r.text).toBe(403);
    }
    expect((await signUp('  Fine@Example.COM ')).status).toBe(200);
  });

  it('bidi-control and zero-width characters in an address are 400 at sign-up and at email change', async () => {
    for (const email of ['ann\u202e@example.com', 'a\u200bnn@example.com', 'ann@exa\u2066mple.com', 'ann@exam\ufeffple.com']) {
      const r = await signUp(email);
      expect(r.status, `${JSON.stringify(email)} ${r.text}`).toBe(400);
      expect(r.json.error?.details?.[0]?.path).toBe('/email');
    }
    const ok = await signUp('changer@example.com');
    const auth = bearer(ok.json.data.accessToken);
    const change = await s.call('POST', '/auth/change-email', { newEmail: 'chan\u200dger2@example.com' }, auth);
    expect(change.status, change.text).toBe(400);
  });

  it('a wrong JSON type for email or password is 400, never 500', async () => {
    for (const body of [
      { type: 'signUp', table: 'people', email: { toString: 1 }, password: 'a long password' },
      { type: 'signUp', table: 'people', email: 'typed@example.com', password: { toString: 1 } },
      { type: 'signUp', table: 'people', email: ['a@b.co'], password: 'a long password' },
    ]) {
      const r = await s.call('POST', '/auth/sign-up', body);
      expect(r.status, r.text).toBe(400);
    }
  });
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
