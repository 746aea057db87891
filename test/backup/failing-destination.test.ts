/**
 * A destination that fails never fails a request (docs/reference/backups.md): writes go on, the
 * failures are counted in /dashboard/metrics, /health says degraded after 3 failed syncs in a row,
 * and everything written meanwhile reaches the destination once it is back.
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/poll.js';
import { createRows, listRows } from '../helpers/rows.js';
import type { TestServer } from '../helpers/server.js';
import { signIn, startServerWithAdmin } from '../helpers/users.js';
import { destination, restoreInto } from './helpers.js';

const ADMIN = { email: 'backup-admin@example.com', password: 'admin-password-1' };

interface Health {
  status: string;
  backup?: string;
}
interface BackupMetrics {
  data: { backup: { lastSyncAt: string | null; lagMs: number; failures: number } };
}

describe('a failing destination', () => {
  const root = destination();
  const dir = join(root.dir, 'dest');
  const aside = join(root.dir, 'aside');
  const url = pathToFileURL(dir).href;
  const folders: string[] = [root.dir];
  let s: TestServer | undefined;
  let dataDir: string | undefined;
  afterAll(async () => {
    await s?.dispose();
    for (const f of [...folders, dataDir ?? '']) if (f) rmSync(f, { recursive: true, force: true });
  });

  it('degrades health, keeps serving writes, and recovers when it returns', async () => {
    mkdirSync(dir);
    ({ server: s, dataDir } = await startServerWithAdmin(ADMIN, { args: ['--backup', url] }));
    const server = s;
    const admin = await signIn(server, 'admins', ADMIN.email, ADMIN.password);
    const metrics = async () => (await server.call<BackupMetrics>('GET', '/dashboard/metrics', undefined, admin.auth)).json.data.backup;
    await until(metrics, (m) => m.lastSyncAt !== null, 'a first sync');
    // The destination goes away: a file where its folder was (root ignores permissions, not this).
    renameSync(dir, aside);
    writeFileSync(dir, 'not a folder');
    const during: string[] = [];
    const health = await until(
      async () => {
        const rows = await createRows(server, 'big', [{ payload: `while failing ${during.length}` }]);
        during.push(rows[0]!.payload as string);
        return (await server.call<{ data: Health }>('GET', '/health')).json.data;
      },
      (h) => h.status === 'degraded',
      'health to degrade',
      60_000,
      500,
    );
    expect(health).toEqual({ status: 'degraded', backup: 'failing' });
    const failing = await metrics();
    expect(failing.failures).toBeGreaterThanOrEqual(3);
    expect(failing.lagMs).toBeGreaterThan(0);
    // It comes back: the next retry (at most 10 s away) ships everything.
    rmSync(dir);
    renameSync(aside, dir);
    await until(
      async () => (await server.call<{ data: Health }>('GET', '/health')).json.data,
      (h) => h.status === 'ok',
      'health to recover',
      60_000,
      500,
    );
    await until(metrics, (m) => m.lagMs === 0, 'the backlog to ship');
    const target = await restoreInto(folders, url);
    await server.stop();
    const { startServer } = await import('../helpers/server.js');
    const back = await startServer({ dataDir: target, env: server.env });
    try {
      const payloads = (await listRows(back, 'big')).map((x) => x.payload);
      for (const p of during) expect(payloads).toContain(p);
    } finally {
      await back.dispose();
    }
  }, 180_000);
});
