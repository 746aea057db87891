/**
 * PostgreSQL backups bring photos back byte for byte (docs/reference/backups.md, "PostgreSQL"),
 * whichever store held them: `_blobs` (no `--storage`: the bytes are rows of the dump) or an S3
 * bucket (s3rver; shipped beside the dumps as content-addressed objects and the photo log). Each
 * test uploads two photos, snapshots, deletes one (and in the bucket adds one), snapshots again,
 * loses the database, then restores each snapshot into an empty database and serves it with an
 * empty data folder: each moment's photos come back identical, the deleted one only at the first.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestS3, type TestS3 } from '../../src/s3/test-server.js';
import { createTestDatabase, type TestDatabase } from '../../src/storage/postgres/test-database.js';
import { image, sendBinary } from '../helpers/photos.js';
import { pause, until } from '../helpers/poll.js';
import { bearer, secret, startServer, type TestServer } from '../helpers/server.js';
import { signIn, signUp, uniqueEmail } from '../helpers/users.js';
import { backupScene, loggedPhotos, PROJECT, runCli, twoPhotos, uploadPhoto } from './helpers.js';

describe('PostgreSQL backups and photos', () => {
  const env = { JWT_SECRET: secret(), PASSWORD_SECRET: secret() };
  const { servers } = backupScene();
  const dbs: TestDatabase[] = [];
  let s3: TestS3;
  beforeAll(async () => {
    s3 = await startTestS3('tablebase-pg-photos');
  }, 60_000);
  afterAll(async () => {
    for (const s of servers.splice(0)) await s.dispose().catch(() => {});
    for (const d of dbs) await d.drop();
    await s3?.close();
  }, 60_000);

  const database = async () => {
    const d = await createTestDatabase();
    dbs.push(d);
    return d;
  };

  /** Restores the snapshot at or before `at` into a new database and serves it (no `--storage`, an empty data folder). */
  const restoreAndServe = async (from: string, at: number | undefined) => {
    const target = await database();
    const r = await runCli(['restore', '--from', from, '--database', target.url, ...(at === undefined ? [] : ['--at', String(at)])]);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const s = await startServer({ env, args: ['--database', target.url] });
    servers.push(s);
    return { s, out: r.stdout };
  };

  const photoBytes = async (s: TestServer, email: string, id: string) => {
    const session = await signIn(s, 'users', email);
    return sendBinary(s.base, 'GET', `/img/${id}`, { headers: bearer(session.accessToken) });
  };

  it('restores photos kept in _blobs (no --storage) byte for byte', async () => {
    const { dest } = backupScene();
    const source = await database();
    const s = await startServer({ env, args: ['--database', source.url] });
    servers.push(s);
    const email = uniqueEmail('pgblobs');
    const user = await signUp(s, email);
    const { kept, dropped } = await twoPhotos();
    const upload = (body: Buffer, type: string) => uploadPhoto(s.base, user.accessToken, body, type);
    const keptId = await upload(kept, 'image/png');
    const droppedId = await upload(dropped, 'image/jpeg');
    const one = await runCli(['backup', 'create', '--project', PROJECT, '--database', source.url, '--to', dest.url], env);
    expect(one.code, one.stderr).toBe(0);
    await pause(50);
    const t1 = Date.now();
    await pause(50);
    expect((await sendBinary(s.base, 'DELETE', `/img/${droppedId}`, { headers: bearer(user.accessToken) })).status).toBe(204);
    const two = await runCli(['backup', 'create', '--project', PROJECT, '--database', source.url, '--to', dest.url], env);
    expect(two.code, two.stderr).toBe(0);
    // The bytes are in the dumps: no photo object is shipped.
    expect(loggedPhotos(dest.dir).size).toBe(0);
    await s.stop('SIGKILL');
    await source.drop();

    const verify = await runCli(['backup', 'verify', '--from', dest.url, '--at', String(t1)]);
    expect(verify.code, verify.stderr + verify.stdout).toBe(0);

    const before = await restoreAndServe(dest.url, t1);
    expect(Buffer.compare((await photoBytes(before.s, email, keptId)).bytes, kept)).toBe(0);
    expect(Buffer.compare((await photoBytes(before.s, email, droppedId)).bytes, dropped)).toBe(0);
    const latest = await restoreAndServe(dest.url, undefined);
    expect(Buffer.compare((await photoBytes(latest.s, email, keptId)).bytes, kept)).toBe(0);
    expect((await photoBytes(latest.s, email, droppedId)).status).toBe(404);
  }, 240_000);

  it('ships photos kept in a bucket beside the dumps and restores them into _blobs', async () => {
    const { dest } = backupScene();
    const source = await database();
    const storage = `s3://${s3.bucket}/pg`;
    const s = await startServer({ env: { ...env, ...s3.env }, args: ['--database', source.url, '--storage', storage, '--backup', dest.url] });
    servers.push(s);
    const email = uniqueEmail('pgs3');
    const user = await signUp(s, email);
    const { kept, dropped } = await twoPhotos();
    const added = await image(20, 20).png().toBuffer();
    const upload = (body: Buffer, type: string) => uploadPhoto(s.base, user.accessToken, body, type);
    const keptId = await upload(kept, 'image/png');
    const droppedId = await upload(dropped, 'image/jpeg');
    // The server ships the bucket's photos on its own, every syncIntervalMs.
    await until(
      async () => loggedPhotos(dest.dir),
      (m) => m.get(keptId) === 'present' && m.get(droppedId) === 'present',
      'both photos to reach the backup',
      60_000,
      200,
    );
    const create = () => runCli(['backup', 'create', '--project', PROJECT, '--database', source.url, '--storage', storage, '--to', dest.url], { ...env, ...s3.env });
    const one = await create();
    expect(one.code, one.stderr).toBe(0);
    await pause(50);
    const t1 = Date.now();
    await pause(50);
    expect((await sendBinary(s.base, 'DELETE', `/img/${droppedId}`, { headers: bearer(user.accessToken) })).status).toBe(204);
    await until(
      async () => loggedPhotos(dest.dir),
      (m) => m.get(droppedId) === 'deleted',
      'the deletion to reach the backup',
      60_000,
      200,
    );
    // Uploaded just before the second dump: the dump's own photo sync ships it.
    const addedId = await upload(added, 'image/png');
    const two = await create();
    expect(two.code, two.stderr).toBe(0);
    expect(loggedPhotos(dest.dir).get(addedId)).toBe('present');
    await s.stop('SIGKILL');
    await source.drop();

    const verify = await runCli(['backup', 'verify', '--from', dest.url, '--at', String(t1)]);
    expect(verify.code, verify.stderr + verify.stdout).toBe(0);
    expect(verify.stdout).toMatch(/photos: 2 from the photo objects/);

    const before = await restoreAndServe(dest.url, t1);
    expect(before.out).toMatch(/2 photo\(s\) into its _blobs/);
    expect(Buffer.compare((await photoBytes(before.s, email, keptId)).bytes, kept)).toBe(0);
    expect(Buffer.compare((await photoBytes(before.s, email, droppedId)).bytes, dropped)).toBe(0);
    const latest = await restoreAndServe(dest.url, undefined);
    expect(Buffer.compare((await photoBytes(latest.s, email, keptId)).bytes, kept)).toBe(0);
    expect(Buffer.compare((await photoBytes(latest.s, email, addedId)).bytes, added)).toBe(0);
    expect((await photoBytes(latest.s, email, droppedId)).status).toBe(404);
  }, 240_000);
});
