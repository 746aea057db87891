/**
 * A start that fails late leaves nothing open (issue #20 item 3): `createApp` opens PostgreSQL and
 * Redis, migrates, starts auth, email, push, the live engine and the photo store, then an OAuth
 * setting it checks later is wrong. Every socket it opened must be closed when it rejects.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../src/core/config.js';
import { createLogger } from '../src/core/logger.js';
import { createApp } from '../src/server/app.js';
import { createTestDatabase, type TestDatabase } from '../src/storage/postgres/test-database.js';
import project from '../examples/conformance/tablebase.config.js';
import { until } from './helpers/poll.js';
import { ROOT, secret } from './helpers/server.js';

const sockets = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap' || r === 'TCPWrap').length;

describe('createApp after a late failure', () => {
  let db: TestDatabase;
  let dataDir: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), 'tb-start-failure-'));
  });
  afterAll(async () => {
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('closes the database, Redis and everything else it opened, then rejects with the cause', async () => {
    const broken = { ...project, auth: { ...project.auth, redirectAllowList: ['not a url'] } };
    const flags = { project: join(ROOT, 'examples/conformance'), data: dataDir, database: db.url, redis: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' };
    const config = resolveConfig(flags, {}, broken, { jwtSecret: secret(), passwordSecret: secret() });
    const before = sockets();
    await expect(createApp(broken, config, { migrate: 'auto', log: createLogger('silent') })).rejects.toThrow(/redirectAllowList/);
    // Sockets end a moment after their close resolves: wait for them (bounded), never for a fixed time.
    expect(
      await until(
        async () => sockets(),
        (n) => n <= before,
        'the sockets of the failed start to close',
        20_000,
      ),
    ).toBeLessThanOrEqual(before);
  });
});
