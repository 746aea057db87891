/**
 * A crash right after "Back up now" answers (docs/reference/backups.md): the snapshot's manifest
 * names a WAL position, and every frame up to it must already be at the destination. Writes go on
 * while the snapshot is taken, so frames land between its checkpoint and its position; the server
 * is killed (SIGKILL) the moment the snapshot answers, before its next sync, and the destination
 * must restore. It did not before the fix: "… is missing (WAL frames 1..2 of epoch 14)".
 */
import { describe, expect, it } from 'vitest';
import { pause } from '../helpers/poll.js';
import { signIn, startServerWithAdmin } from '../helpers/users.js';
import { backupScene, restoreInto } from './helpers.js';

const ADMIN = { email: 'crash-admin@example.com', password: 'admin-password-1' };

describe('a crash right after a snapshot', () => {
  const { dest, servers, folders } = backupScene();

  it.each([1, 2, 3])(
    'leaves a destination that restores: the frames through the snapshot position went first (%i)',
    async () => {
      // Killed within milliseconds of the answer: the next sync (every second) has not run yet.
      const { server: s, dataDir } = await startServerWithAdmin(ADMIN, { args: ['--backup', dest.url] });
      servers.push(s);
      folders.push(dataDir);
      const admin = await signIn(s, 'admins', ADMIN.email, ADMIN.password);
      let stop = false;
      const writers = Array.from({ length: 4 }, async (_, w) => {
        for (let n = 0; !stop; n++) await s.call('POST', '/db', { table: 'big', object: { payload: `load-${w}-${n}` } }).catch(() => undefined);
      });
      await pause(300);
      const snap = await s.call('POST', '/dashboard/backups', undefined, admin.auth);
      expect(snap.status, snap.text).toBe(200);
      await s.stop('SIGKILL');
      stop = true;
      await Promise.all(writers);
      await restoreInto(folders, dest.url);
    },
    120_000,
  );
});
