/**
 * A snapshot runs while writes go on (docs/reference/backups.md): POST /dashboard/backups during
 * a steady write load; every write is answered 2xx, a second POST while the first runs joins it,
 * and a restore holds every answered write. GET answers the window and the snapshots; 404 without
 * a destination.
 */
import { describe, expect, it } from 'vitest';
import { pause } from '../helpers/poll.js';
import { createRows, listRows } from '../helpers/rows.js';
import { startServer } from '../helpers/server.js';
import { signIn, startServerWithAdmin } from '../helpers/users.js';
import { backupScene, restoreInto } from './helpers.js';

const ADMIN = { email: 'snap-admin@example.com', password: 'admin-password-1' };
interface Snap {
  id: string;
  takenAt: string;
  bytes: number;
}
interface Listing {
  destination: string;
  lastSyncAt: string | null;
  lagMs: number;
  earliest: string | null;
  latest: string | null;
  snapshots: Snap[];
}

describe('a snapshot under a steady write load', () => {
  const { dest, servers, folders } = backupScene();

  it('answers every write while the snapshot runs, and the restore holds them all', async () => {
    const { server: s, dataDir } = await startServerWithAdmin(ADMIN, { args: ['--backup', dest.url] });
    servers.push(s);
    folders.push(dataDir);
    const admin = await signIn(s, 'admins', ADMIN.email, ADMIN.password);
    // ~20 MB, so the snapshot takes a while.
    for (let i = 0; i < 40; i++)
      await createRows(
        s,
        'big',
        Array.from({ length: 8 }, (_, j) => ({ payload: `seed-${i}-${j}-${'z'.repeat(60_000)}` })),
      );
    let stop = false;
    const answered: string[] = [];
    const failures: string[] = [];
    const writers = Array.from({ length: 4 }, async (_, w) => {
      for (let n = 0; !stop; n++) {
        const r = await s.call('POST', '/db', { table: 'big', object: { payload: `load-${w}-${n}` } });
        if (r.status === 200) answered.push(`load-${w}-${n}`);
        else failures.push(`${r.status} ${r.text}`);
      }
    });
    await pause(300);
    const [a, b] = await Promise.all([
      s.call<{ data: Snap }>('POST', '/dashboard/backups', undefined, admin.auth),
      pause(20).then(() => s.call<{ data: Snap }>('POST', '/dashboard/backups', undefined, admin.auth)),
    ]);
    await pause(300);
    stop = true;
    await Promise.all(writers);
    expect(failures).toEqual([]);
    expect(answered.length).toBeGreaterThan(0);
    expect(a.status, a.text).toBe(200);
    expect(b.json.data.id, 'the second call joined the first').toBe(a.json.data.id);
    expect(a.json.data.bytes).toBeGreaterThan(10_000_000);

    const listing = await s.call<{ data: Listing }>('GET', '/dashboard/backups', undefined, admin.auth);
    expect(listing.status).toBe(200);
    expect(listing.json.data.destination).toBe(dest.url);
    expect(listing.json.data.snapshots.map((x) => x.id)).toContain(a.json.data.id);
    expect(Date.parse(listing.json.data.earliest!)).toBeLessThanOrEqual(Date.parse(listing.json.data.latest!));

    await pause(2_500);
    const target = await restoreInto(folders, dest.url);
    const back = await startServer({ dataDir: target, env: s.env });
    servers.push(back);
    const n = (await back.get<{ data: number }>('/db/count', { table: 'big' })).json.data;
    expect(n).toBe(320 + answered.length);
    expect((await listRows(back, 'big', { payload: { eq: answered.at(-1) } })).length).toBe(1);
  }, 240_000);

  it('answers 404 without a destination', async () => {
    const { server: s, dataDir } = await startServerWithAdmin(ADMIN);
    servers.push(s);
    folders.push(dataDir);
    const admin = await signIn(s, 'admins', ADMIN.email, ADMIN.password);
    expect((await s.call('GET', '/dashboard/backups', undefined, admin.auth)).status).toBe(404);
    expect((await s.call('POST', '/dashboard/backups', undefined, admin.auth)).status).toBe(404);
  }, 120_000);
});
