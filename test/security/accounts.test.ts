/**
 * Issue #26 item 2: a deleted account's tokens kept working for their whole lifetime — a deleted
 * admin could still change another admin's email on /dashboard/*, a deleted user still wrote.
 * Deleting an auth row now revokes every session of it in the same transaction, wherever the delete
 * comes from (the write executor knows the table is an auth table), and an admin's edit of its
 * email unverifies it and revokes its sessions too.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { secret, startServer, type TestServer } from '../helpers/server.js';
import { createAdmin, signIn, signUp, uniqueEmail } from '../helpers/users.js';

let s: TestServer;
let dataDir: string;
let admin: Record<string, string>;
let admin2: { auth: Record<string, string>; id: string };
const first = { email: 'accounts-admin-1@example.com', password: 'admin-pass-1234' };
const second = { email: 'accounts-admin-2@example.com', password: 'admin-pass-5678' };

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'tb-accounts-'));
  const env = { JWT_SECRET: secret(), PASSWORD_SECRET: secret(), LOG_LEVEL: 'warn' };
  await createAdmin(dataDir, env, first);
  await createAdmin(dataDir, env, second);
  s = await startServer({ dataDir, env });
  admin = (await signIn(s, 'admins', first.email, first.password)).auth;
  const a2 = await signIn(s, 'admins', second.email, second.password);
  admin2 = { auth: a2.auth, id: a2.user.id };
}, 120_000);
afterAll(async () => {
  await s?.dispose();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('a deleted auth row takes its sessions with it (issue #26)', () => {
  it('an admin deleted through the dashboard: its token is 401 INVALID_TOKEN on /dashboard/* and /db at once', async () => {
    expect((await s.get('/dashboard/metrics', {}, admin2.auth)).status).toBe(200);
    const del = await s.call('DELETE', '/dashboard/rows', { table: 'admins', id: admin2.id }, admin);
    expect(del.status, del.text).toBe(204);
    for (const r of [
      await s.get('/dashboard/metrics', {}, admin2.auth),
      await s.call('PATCH', '/dashboard/rows', { table: 'admins', id: admin2.id, values: { email: 'taken@example.com' } }, admin2.auth),
      await s.get('/db/count', { table: 'tasks' }, admin2.auth),
    ]) {
      expect(r.status, r.text).toBe(401);
      expect(r.json.error?.code).toBe('INVALID_TOKEN');
    }
  });

  it('a user deleted by an admin: its token stops writing, and refresh is refused', async () => {
    const u = await signUp(s, uniqueEmail('deleted'));
    expect((await s.call('POST', '/db', { table: 'tasks', object: { title: 'before' } }, u.auth)).status).toBe(200);
    expect((await s.call('DELETE', '/dashboard/rows', { table: 'users', id: u.user.id }, admin)).status).toBe(204);
    const write = await s.call('POST', '/db', { table: 'tasks', object: { title: 'after' } }, u.auth);
    expect(write.status, write.text).toBe(401);
    expect(write.json.error?.code).toBe('INVALID_TOKEN');
    const refresh = await s.call('POST', '/auth/refresh', { refreshToken: u.refreshToken });
    expect(refresh.status, refresh.text).toBe(401);
  });

  it("an admin's edit of a user's email unverifies the account and revokes its sessions", async () => {
    const u = await signUp(s, uniqueEmail('renamed'));
    expect((await s.call('POST', '/dashboard/users/verify', { table: 'users', id: u.user.id }, admin)).status).toBeLessThan(300);
    const edit = await s.call('PATCH', '/dashboard/rows', { table: 'users', id: u.user.id, values: { email: uniqueEmail('new') } }, admin);
    expect(edit.status, edit.text).toBe(200);
    expect(edit.json.data.isVerified).toBe(false);
    const r = await s.get('/db', { table: 'users', where: { id: { eq: u.user.id } } }, u.auth);
    expect(r.status, r.text).toBe(401);
    expect(r.json.error?.code).toBe('INVALID_TOKEN');
  });
});
