/**
 * A conformance server with an admin row, a signed-up user and some tasks, for the dashboard's
 * API and browser tests.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT, secret, startServer, type TestServer } from '../helpers/server.js';

export const ADMIN = { email: 'root@example.com', password: 'admin-pass-1234' };
export const USER = { email: 'ann@example.com', password: 'user-pass-1234' };

export interface DashboardFixture {
  server: TestServer;
  adminToken: string;
  userToken: string;
  dispose(): Promise<void>;
}

export async function startDashboardServer(tasks = 0): Promise<DashboardFixture> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tb-dash-'));
  const env = { JWT_SECRET: secret(), PASSWORD_SECRET: secret() };
  // The admin row must exist before the server opens the database, hashed with the same pepper.
  const args = ['bin/tablebase.mjs', 'admin', 'create', '--project', 'examples/conformance', '--data', dataDir, '--table', 'admins', '--email', ADMIN.email, '--password', ADMIN.password];
  await promisify(execFile)(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, timeout: 60_000 });
  const server = await startServer({ dataDir, env });
  const admin = await server.call('POST', '/auth/sign-in', { type: 'signIn', table: 'admins', ...ADMIN });
  const user = await server.call('POST', '/auth/sign-up', { type: 'signUp', table: 'users', ...USER });
  if (admin.status !== 200 || user.status !== 200) throw new Error(`fixture sign-in failed: ${admin.text} ${user.text}`);
  if (tasks > 0) {
    const objects = Array.from({ length: tasks }, (_, i) => ({ title: `Task ${String(i).padStart(3, '0')}`, priority: i, score: i / 2, tags: i % 2 ? ['odd'] : [] }));
    const r = await server.call('POST', '/db/many', { table: 'tasks', objects });
    if (r.status !== 200) throw new Error(`seeding tasks failed: ${r.text}`);
  }
  return {
    server,
    adminToken: admin.json.data.accessToken,
    userToken: user.json.data.accessToken,
    dispose: async () => {
      await server.dispose();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
