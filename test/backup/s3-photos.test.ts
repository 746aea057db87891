/**
 * Photos on S3 reach the backup (docs/reference/backups.md, "Photos"): the backup reads them
 * through the photo store, not the data folder (which, with `--storage s3://`, holds none). A
 * server on a real s3rver bucket with a folder destination: upload, wait for the sync, delete one,
 * kill -9; restore → the photos of each moment come back byte for byte, into the restored data
 * folder's own store, and `storage migrate` puts them back in a bucket.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestS3, type TestS3 } from '../../src/s3/test-server.js';
import { image, sendBinary } from '../helpers/photos.js';
import { until } from '../helpers/poll.js';
import { bearer, secret, startServer, type TestServer } from '../helpers/server.js';
import { signIn, signUp, uniqueEmail } from '../helpers/users.js';
import { destination, loggedPhotos, newDataDir, PROJECT, runCli, twoPhotos, uploadPhoto } from './helpers.js';

// SQLite's continuous backup (PostgreSQL's photos, in `_blobs` or a bucket: postgres-photos.test.ts).
describe.skipIf(process.env.TABLEBASE_TEST_DB === 'postgres')('photos on S3 in a continuous backup', () => {
  const env = { JWT_SECRET: secret(), PASSWORD_SECRET: secret() };
  const dest = destination();
  const servers: TestServer[] = [];
  const folders: string[] = [dest.dir];
  let s3: TestS3;
  beforeAll(async () => {
    s3 = await startTestS3('tablebase-backup-photos');
  }, 60_000);
  afterAll(async () => {
    for (const s of servers) await s.dispose().catch(() => {});
    for (const f of folders) rmSync(f, { recursive: true, force: true });
    await s3?.close();
  }, 60_000);

  it('restores the photos of each moment byte for byte after kill -9', async () => {
    const s = await startServer({ env: { ...env, ...s3.env }, args: ['--storage', `s3://${s3.bucket}/app`, '--backup', dest.url] });
    servers.push(s);
    const email = uniqueEmail('s3backup');
    const user = await signUp(s, email);
    const { kept, dropped } = await twoPhotos();
    const upload = (body: Buffer, type: string) => uploadPhoto(s.base, user.accessToken, body, type);
    const keptId = await upload(kept, 'image/png');
    const droppedId = await upload(dropped, 'image/jpeg');
    // The data folder holds no original: only the bucket does (what the backup must read).
    expect(readdirSync(join(s.dataDir, 'photos')).filter((n) => n.startsWith('ph_'))).toEqual([]);
    await until(
      async () => loggedPhotos(dest.dir),
      (m) => m.get(keptId) === 'present' && m.get(droppedId) === 'present',
      'both photos to reach the backup',
      60_000,
      200,
    );
    const bothAt = Date.now();
    await new Promise((r) => setTimeout(r, 50));
    expect((await sendBinary(s.base, 'DELETE', `/img/${droppedId}`, { headers: bearer(user.accessToken) })).status).toBe(204);
    await until(
      async () => loggedPhotos(dest.dir),
      (m) => m.get(droppedId) === 'deleted',
      'the deletion to reach the backup',
      60_000,
      200,
    );
    await s.stop('SIGKILL');

    // The drill passes: every photo object matches its checksum.
    const verify = await runCli(['backup', 'verify', '--from', dest.url]);
    expect(verify.code, verify.stderr + verify.stdout).toBe(0);

    // Latest: the kept photo only, in the restored folder's own store.
    const latest = newDataDir();
    folders.push(join(latest, '..'));
    const r = await runCli(['restore', '--from', dest.url, '--data', latest]);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(Buffer.compare(readFileSync(join(latest, 'photos', keptId)), kept)).toBe(0);
    expect(readdirSync(join(latest, 'photos')).filter((n) => n.startsWith('ph_'))).toEqual([keptId]);

    // Before the delete: both.
    const earlier = newDataDir();
    folders.push(join(earlier, '..'));
    const r2 = await runCli(['restore', '--from', dest.url, '--data', earlier, '--at', String(bothAt)]);
    expect(r2.code, r2.stderr + r2.stdout).toBe(0);
    expect(Buffer.compare(readFileSync(join(earlier, 'photos', keptId)), kept)).toBe(0);
    expect(Buffer.compare(readFileSync(join(earlier, 'photos', droppedId)), dropped)).toBe(0);

    // Back on S3: `storage migrate` to a fresh prefix, then serve from it.
    const moved = await runCli(['storage', 'migrate', '--project', PROJECT, '--data', latest, '--to', `s3://${s3.bucket}/restored`], s3.env);
    expect(moved.code, moved.stderr + moved.stdout).toBe(0);
    const back = await startServer({ env: { ...env, ...s3.env }, dataDir: latest, args: ['--storage', `s3://${s3.bucket}/restored`] });
    servers.push(back);
    const session = await signIn(back, 'users', email);
    const photo = await sendBinary(back.base, 'GET', `/img/${keptId}`, { headers: bearer(session.accessToken) });
    expect(photo.status).toBe(200);
    expect(Buffer.compare(photo.bytes, kept)).toBe(0);
  }, 240_000);

  it('backup create reads the photos through --storage too', async () => {
    const s = await startServer({ env: { ...env, ...s3.env }, args: ['--storage', `s3://${s3.bucket}/cli`] });
    servers.push(s);
    const user = await signUp(s, uniqueEmail('s3create'));
    const png = await image(24, 18).png().toBuffer();
    const up = await sendBinary<{ data: { id: string } }>(s.base, 'POST', '/img', { body: png, type: 'image/png', headers: bearer(user.accessToken) });
    expect(up.status, up.text).toBe(200);
    const to = destination();
    folders.push(to.dir);
    const created = await runCli(['backup', 'create', '--project', PROJECT, '--data', s.dataDir, '--storage', `s3://${s3.bucket}/cli`, '--to', to.url], { ...env, ...s3.env });
    expect(created.code, created.stderr + created.stdout).toBe(0);
    const target = newDataDir();
    folders.push(join(target, '..'));
    const r = await runCli(['restore', '--from', to.url, '--data', target]);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(Buffer.compare(readFileSync(join(target, 'photos', up.json.data.id)), png)).toBe(0);
  }, 120_000);
});
