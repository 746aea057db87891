/**
 * A damaged backup is never restored silently (docs/reference/backups.md): a changed, truncated or
 * missing object stops restore with exit 1 and one line naming it, and the target is left absent
 * or empty; a non-empty target is refused with exit 2; `verify` and `list` read the same backup.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { image, sendBinary } from '../helpers/photos.js';
import { pause } from '../helpers/poll.js';
import { createRows } from '../helpers/rows.js';
import { bearer, startServer } from '../helpers/server.js';
import { signUp, uniqueEmail } from '../helpers/users.js';
import { destination, newDataDir, runCli } from './helpers.js';

function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)));
}

describe('damaged backups', () => {
  const dest = destination();
  const folders: string[] = [dest.dir];
  beforeAll(async () => {
    const s = await startServer({ args: ['--backup', dest.url] });
    try {
      const user = await signUp(s, uniqueEmail('damaged'));
      await createRows(
        s,
        'big',
        Array.from({ length: 30 }, (_, i) => ({ payload: `d-${i}` })),
      );
      const png = await image(20, 20).png().toBuffer();
      const up = await sendBinary(s.base, 'POST', '/img', { body: png, type: 'image/png', headers: bearer(user.accessToken) });
      expect(up.status, up.text).toBe(200);
      await createRows(s, 'big', [{ payload: 'after the photo' }]);
      await pause(2_500);
    } finally {
      await s.stop();
    }
  }, 120_000);
  afterAll(() => {
    for (const f of folders) rmSync(f, { recursive: true, force: true });
  });

  /** A copy of the backup with `damage` applied to the first file matching `pick`. */
  function damaged(pick: RegExp, damage: (file: string) => void): { url: string; name: string } {
    const copy = destination();
    folders.push(copy.dir);
    cpSync(dest.dir, copy.dir, { recursive: true });
    // The newest match: the object a restore at the latest time needs.
    const name = files(copy.dir)
      .filter((f) => pick.test(f))
      .sort()
      .at(-1);
    expect(name, `a file matching ${pick}`).toBeDefined();
    damage(join(copy.dir, name!));
    return { url: copy.url, name: name! };
  }

  it('lists, verifies and restores the sound backup', async () => {
    const list = await runCli(['backup', 'list', '--from', dest.url, '--json']);
    expect(list.code, list.stderr).toBe(0);
    const listed = JSON.parse(list.stdout) as { earliest: string; latest: string; snapshots: { id: string; takenAt: string; bytes: number }[] };
    expect(listed.snapshots.length).toBeGreaterThan(0);
    expect(Date.parse(listed.earliest)).toBeLessThanOrEqual(Date.parse(listed.latest));
    const verify = await runCli(['backup', 'verify', '--from', dest.url]);
    expect(verify.code, verify.stderr + verify.stdout).toBe(0);
    expect(verify.stdout).toMatch(/integrity_check: ok/);
    expect(verify.stdout).toMatch(/big: 31 rows/);
    expect(verify.stdout).toMatch(/_photos: 1 rows/);
  }, 120_000);

  const cases: [string, RegExp, (file: string) => void][] = [
    ['a changed WAL segment', /\.wal$/, (f) => writeFileSync(f, Buffer.from(readFileSync(f).map((b, i) => (i === 100 ? b ^ 0xff : b))))],
    ['a truncated snapshot', /snapshots\/.*\.db$/, (f) => truncateSync(f, statSync(f).size >> 1)],
    ['a missing photo', /photos\/objects\//, (f) => rmSync(f)],
    ['a missing WAL segment', /\.wal$/, (f) => rmSync(f)],
    ['a changed manifest', /wal\/.*\.json$/, (f) => writeFileSync(f, readFileSync(f, 'utf8').replace('"from":', '"from": 1, "x":'))],
  ];
  for (const [what, pick, damage] of cases) {
    it(`refuses ${what} with exit 1, naming it, and leaves the target empty`, async () => {
      const d = damaged(pick, damage);
      const target = newDataDir();
      folders.push(target);
      const r = await runCli(['restore', '--from', d.url, '--data', target]);
      expect(r.code, r.stdout + r.stderr).toBe(1);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      if (!/json$/.test(d.name)) expect(lines[0]).toContain(d.name);
      else expect(lines[0]).toMatch(/backup damaged: generations\//);
      expect(!existsSync(target) || readdirSync(target).length === 0).toBe(true);
      const verify = await runCli(['backup', 'verify', '--from', d.url]);
      expect(verify.code).toBe(1);
    }, 120_000);
  }

  it('refuses a non-empty target with exit 2 unless --force, and a time outside the window with exit 1', async () => {
    const target = newDataDir();
    folders.push(target);
    mkdirSync(target, { recursive: true });
    writeFileSync(join(target, 'keep.txt'), 'mine');
    const r = await runCli(['restore', '--from', dest.url, '--data', target]);
    expect(r.code).toBe(2);
    expect(readFileSync(join(target, 'keep.txt'), 'utf8')).toBe('mine');
    const forced = await runCli(['restore', '--from', dest.url, '--data', target, '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(existsSync(join(target, 'db.sqlite'))).toBe(true);
    const early = newDataDir();
    folders.push(early);
    const out = await runCli(['restore', '--from', dest.url, '--data', early, '--at', '2001-01-01T00:00:00Z']);
    expect(out.code).toBe(1);
    expect(out.stderr.trim()).toMatch(/restorable window is .+ … .+/);
    expect(existsSync(early)).toBe(false);
    expect(pathToFileURL(early).href).toMatch(/^file:/);
  }, 120_000);
});
