/**
 * `/health` of `serve --workers` shows a failing backup (docs/reference/backups.md): the backup
 * runs in the primary, requests are answered by the workers, and the primary announces the
 * backup's state to them over the IPC channel. Degraded after 3 failed syncs, ok once a sync
 * succeeds again.
 */
import { get } from 'node:http';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/poll.js';
import { createRows } from '../helpers/rows.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { destination } from './helpers.js';

interface Health {
  status: string;
  backup?: string;
}

/** `/health` on a connection of its own: node:cluster hands new connections to the workers in turn. */
function freshHealth(base: string): Promise<Health> {
  return new Promise((resolve, reject) => {
    get(`${base}/health`, { agent: false }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve((JSON.parse(body) as { data: Health }).data));
    }).on('error', reject);
  });
}

// The SQLite writer's continuous backup: the PostgreSQL run has no primary-only WAL shipping.
describe.skipIf(process.env.TABLEBASE_TEST_DB === 'postgres')('a failing destination with --workers 2', () => {
  const root = destination();
  const dir = join(root.dir, 'dest');
  const aside = join(root.dir, 'aside');
  const url = pathToFileURL(dir).href;
  let s: TestServer | undefined;
  afterAll(async () => {
    await s?.dispose();
    rmSync(root.dir, { recursive: true, force: true });
  }, 60_000);

  it("degrades every worker's /health, and recovers", async () => {
    mkdirSync(dir);
    s = await startServer({ workers: 2, args: ['--backup', url] });
    const server = s;
    const health = async () => (await server.call<{ data: Health }>('GET', '/health')).json.data;
    await until(
      async () => existsSync(join(dir, 'generations')) && (await health()),
      (h) => h !== false && h.status === 'ok',
      'a first sync',
      60_000,
      200,
    );
    // The destination goes away: a file where its folder was (root ignores permissions, not this).
    renameSync(dir, aside);
    writeFileSync(dir, 'not a folder');
    let n = 0;
    const degraded = await until(
      async () => {
        await createRows(server, 'big', [{ payload: `while failing ${n++}` }]);
        return health();
      },
      (h) => h.status === 'degraded',
      'health to degrade',
      90_000,
      500,
    );
    expect(degraded).toEqual({ status: 'degraded', backup: 'failing' });
    // Each new connection goes to the next worker: every one of them says so.
    for (let i = 0; i < 6; i++) expect(await freshHealth(server.base)).toEqual({ status: 'degraded', backup: 'failing' });
    rmSync(dir);
    renameSync(aside, dir);
    await until(health, (h) => h.status === 'ok', 'health to recover', 90_000, 500);
  }, 240_000);
});
