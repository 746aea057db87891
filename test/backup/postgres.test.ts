/**
 * PostgreSQL mode (docs/reference/backups.md): `backup create` takes a consistent logical snapshot
 * while the server serves; `restore --database <empty db> --at T` loads the last snapshot at or
 * before T, internal tables included (the user signs in with the same password).
 */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../src/storage/postgres/test-database.js';
import { pause } from '../helpers/poll.js';
import { createRows, listRows } from '../helpers/rows.js';
import { secret, startServer, type TestServer } from '../helpers/server.js';
import { signIn, signUp, uniqueEmail } from '../helpers/users.js';
import { destination, PROJECT, runCli } from './helpers.js';

describe('PostgreSQL backups', () => {
  const dest = destination();
  const dbs: TestDatabase[] = [];
  const servers: TestServer[] = [];
  afterAll(async () => {
    for (const s of servers) await s.dispose();
    for (const d of dbs) await d.drop();
    rmSync(dest.dir, { recursive: true, force: true });
  });

  it('restores the snapshot at or before T into an empty database', async () => {
    const env = { JWT_SECRET: secret(), PASSWORD_SECRET: secret() };
    const source = await createTestDatabase();
    dbs.push(source);
    const s = await startServer({ env, args: ['--database', source.url] });
    servers.push(s);
    const email = uniqueEmail('pg');
    const user = await signUp(s, email);
    const first = await createRows(
      s,
      'big',
      Array.from({ length: 30 }, (_, i) => ({ payload: `pg1-${i}` })),
    );
    const one = await runCli(['backup', 'create', '--project', PROJECT, '--database', source.url, '--to', dest.url], env);
    expect(one.code, one.stderr).toBe(0);
    await pause(50);
    const t1 = Date.now();
    await pause(50);
    await createRows(s, 'big', [{ payload: 'pg2' }]);
    const two = await runCli(['backup', 'create', '--project', PROJECT, '--database', source.url, '--to', dest.url], env);
    expect(two.code, two.stderr).toBe(0);
    expect(two.stdout.trim()).not.toBe(one.stdout.trim());

    const verify = await runCli(['backup', 'verify', '--from', dest.url]);
    expect(verify.code, verify.stderr).toBe(0);
    expect(verify.stdout).toMatch(/big: 31 rows/);

    const target = await createTestDatabase();
    dbs.push(target);
    const r = await runCli(['restore', '--from', dest.url, '--database', target.url, '--at', String(t1)]);
    expect(r.code, r.stderr).toBe(0);
    const again = await runCli(['restore', '--from', dest.url, '--database', target.url]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/not empty/);

    const back = await startServer({ env, args: ['--database', target.url] });
    servers.push(back);
    expect((await listRows(back, 'big')).map((x) => x.payload).sort()).toEqual(first.map((x) => x.payload).sort());
    expect((await signIn(back, 'users', email)).id).toBe(user.id);
  }, 240_000);
});
