/**
 * docs/reference/rules-and-hooks.md: custom operations write as trusted code, so the before-image check (the caller's row
 * canView on every matched row, before the handler runs) is what keeps one user from rewriting or
 * deleting another's rows through them. 403, and nothing written.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, ROOT, startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
const users: Record<string, { id: string; auth: Record<string, string> }> = {};

beforeAll(async () => {
  s = await startServer({ project: join(ROOT, 'test/fixtures/before-image'), env: { LOG_LEVEL: 'warn' } });
  for (const name of ['ann', 'ben']) {
    const r = await s.call('POST', '/auth/sign-up', { type: 'signUp', table: 'people', email: `${name}@example.com`, password: 'a long password' });
    expect(r.status, r.text).toBe(200);
    users[name] = { id: r.json.data.user.id, auth: bearer(r.json.data.accessToken) };
  }
});
afterAll(async () => {
  await s?.dispose();
});

describe('custom operations see only rows their caller can see (docs/reference/rules-and-hooks.md)', () => {
  it('retitle and purge of another user’s rows are 403 and write nothing; on one’s own rows they work', async () => {
    const ann = users.ann!;
    const ben = users.ben!;
    const doc = (await s.call('POST', '/db', { table: 'docs', object: { title: 'ann doc' } }, ann.auth)).json.data;
    const mine = (await s.call('POST', '/db', { table: 'docs', object: { title: 'ben doc' } }, ben.auth)).json.data;
    const attempts = [
      s.call('PATCH', '/db/custom/retitle', { table: 'docs', where: { id: { eq: doc.id } } }, ben.auth),
      s.call('PATCH', '/db/custom/retitle/many', { table: 'docs', where: {} }, ben.auth),
      s.call('PATCH', '/db/custom/purge', { table: 'docs', where: { id: { eq: doc.id } } }, ben.auth),
      s.call('PATCH', '/db/custom/purge/many', { table: 'docs', where: {} }, ben.auth),
    ];
    for (const r of await Promise.all(attempts)) expect(r.status, r.text).toBe(403);
    const annDoc = await s.get('/db', { table: 'docs', where: { id: { eq: doc.id } } }, ann.auth);
    expect(annDoc.json.data.title).toBe('ann doc');
    const benDoc = await s.get('/db', { table: 'docs', where: { id: { eq: mine.id } } }, ben.auth);
    expect(benDoc.json.data.title).toBe('ben doc');
    const own = await s.call('PATCH', '/db/custom/retitle', { table: 'docs', where: { id: { eq: mine.id } } }, ben.auth);
    expect(own.status, own.text).toBe(200);
    expect(own.json.data.title).toBe('retitled');
  });
});
