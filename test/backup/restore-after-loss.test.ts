/**
 * The disk is lost: kill -9 the server, delete its data folder, restore from the backup folder,
 * serve the restored folder: every row, the user (same password) and the photo are back, byte for
 * byte (docs/reference/backups.md).
 */
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { image, sendBinary } from '../helpers/photos.js';
import { pause } from '../helpers/poll.js';
import { createRows, listRows } from '../helpers/rows.js';
import { bearer, secret, startServer } from '../helpers/server.js';
import { signIn, signUp, uniqueEmail } from '../helpers/users.js';
import { backupScene, restoreInto } from './helpers.js';

describe('restore after kill -9 and the loss of the data folder', () => {
  const env = { JWT_SECRET: secret(), PASSWORD_SECRET: secret() };
  const { dest, servers, folders } = backupScene();

  it('brings back every row, the user and the photo', async () => {
    const s = await startServer({ env, args: ['--backup', dest.url] });
    servers.push(s);
    const email = uniqueEmail('backup');
    const user = await signUp(s, email);
    const rows = await createRows(
      s,
      'big',
      Array.from({ length: 50 }, (_, i) => ({ payload: `row ${i} ${'x'.repeat(i * 40)}` })),
    );
    const png = await image(40, 30).png().toBuffer();
    const up = await sendBinary<{ data: { id: string } }>(s.base, 'POST', '/img', { body: png, type: 'image/png', headers: bearer(user.accessToken) });
    expect(up.status, up.text).toBe(200);
    const photoId = up.json.data.id;
    // Everything answered more than syncIntervalMs + 1 s before the kill must survive it.
    await pause(2_500);
    await s.stop('SIGKILL');
    rmSync(s.dataDir, { recursive: true, force: true });

    const target = await restoreInto(folders, dest.url);

    const back = await startServer({ env, dataDir: target });
    servers.push(back);
    const again = await listRows(back, 'big');
    expect(again.map((x) => x.payload).sort()).toEqual(rows.map((x) => x.payload).sort());
    const session = await signIn(back, 'users', email);
    expect(session.id).toBe(user.id);
    const photo = await sendBinary(back.base, 'GET', `/img/${photoId}`, { headers: bearer(session.accessToken) });
    expect(photo.status).toBe(200);
    expect(Buffer.compare(photo.bytes, png)).toBe(0);
  }, 180_000);
});
