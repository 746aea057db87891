/**
 * A conformance server with an admin row, a signed-up user and some tasks, for the dashboard's
 * API and browser tests (built on the shared helpers of test/helpers/).
 */
import { rmSync } from 'node:fs';
import { image } from '../helpers/photos.js';
import { bearer, type TestServer } from '../helpers/server.js';
import { signIn, signUp, startServerWithAdmin } from '../helpers/users.js';

export const ADMIN = { email: 'root@example.com', password: 'admin-pass-1234' };
export const USER = { email: 'ann@example.com', password: 'user-pass-1234' };

export interface DashboardFixture {
  server: TestServer;
  adminToken: string;
  userToken: string;
  dispose(): Promise<void>;
}

export async function startDashboardServer(tasks = 0): Promise<DashboardFixture> {
  const { server, dataDir } = await startServerWithAdmin(ADMIN);
  const admin = await signIn(server, 'admins', ADMIN.email, ADMIN.password);
  const user = await signUp(server, USER.email, { password: USER.password });
  if (tasks > 0) {
    const objects = Array.from({ length: tasks }, (_, i) => ({ title: `Task ${String(i).padStart(3, '0')}`, priority: i, score: i / 2, tags: i % 2 ? ['odd'] : [] }));
    const r = await server.call('POST', '/db/many', { table: 'tasks', objects });
    if (r.status !== 200) throw new Error(`seeding tasks failed: ${r.text}`);
  }
  return {
    server,
    adminToken: admin.accessToken,
    userToken: user.accessToken,
    dispose: async () => {
      await server.dispose();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Uploads a 64×48 PNG as `token`'s user; answers the photo id. */
export async function uploadPhoto(server: TestServer, token: string): Promise<string> {
  const png = await image(64, 48).png().toBuffer();
  const up = await fetch(`${server.base}/img`, { method: 'POST', body: new Uint8Array(png), headers: { ...bearer(token), 'content-type': 'image/png' } });
  if (up.status !== 200) throw new Error(`photo upload failed: ${up.status} ${await up.text()}`);
  return ((await up.json()) as { data: { id: string } }).data.id;
}
