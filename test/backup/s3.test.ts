/**
 * The same continuous backup and restore to an S3 destination (s3rver on loopback): kill -9, the
 * data folder gone, restore from the bucket gives every row back; no credential in any output.
 */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestS3, TEST_S3_SECRET, type TestS3 } from '../../src/s3/test-server.js';
import { pause } from '../helpers/poll.js';
import { createRows, listRows } from '../helpers/rows.js';
import { secret, startServer, type TestServer } from '../helpers/server.js';
import { restoreInto, runCli } from './helpers.js';

describe('backup to S3', () => {
  let s3: TestS3 | undefined;
  const servers: TestServer[] = [];
  const folders: string[] = [];
  afterAll(async () => {
    for (const s of servers) await s.dispose();
    await s3?.close();
    for (const f of folders) rmSync(f, { recursive: true, force: true });
  });

  it('restores every row after kill -9 and the loss of the data folder', async () => {
    s3 = await startTestS3('backups');
    const url = 's3://backups/apps/one';
    const env = { JWT_SECRET: secret(), PASSWORD_SECRET: secret(), ...s3.env };
    const s = await startServer({ env, args: ['--backup', url] });
    servers.push(s);
    const rows = await createRows(
      s,
      'big',
      Array.from({ length: 25 }, (_, i) => ({ payload: `s3-${i}` })),
    );
    await pause(2_500);
    await s.stop('SIGKILL');
    expect(s.log()).not.toContain(TEST_S3_SECRET);
    rmSync(s.dataDir, { recursive: true, force: true });

    const list = await runCli(['backup', 'list', '--from', url, '--json'], s3.env);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).not.toContain(TEST_S3_SECRET);
    const target = await restoreInto(folders, url, { env: s3.env });
    const back = await startServer({ env, dataDir: target });
    servers.push(back);
    expect((await listRows(back, 'big')).map((x) => x.payload).sort()).toEqual(rows.map((x) => x.payload).sort());
  }, 180_000);
});
