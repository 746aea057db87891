/**
 * `backup create` from the command line while the server serves (docs/reference/backups.md): a
 * consistent copy through SQLite, listed by `backup list`, restorable; a write after it is not in it.
 */
import { describe, expect, it } from 'vitest';
import { createRows, listRows } from '../helpers/rows.js';
import { startServer } from '../helpers/server.js';
import { backupScene, PROJECT, restoreInto, runCli } from './helpers.js';

describe('backup create from the command line', () => {
  const { dest, servers, folders } = backupScene();

  it('snapshots a serving database and restores it', async () => {
    const s = await startServer();
    servers.push(s);
    const before = await createRows(
      s,
      'big',
      Array.from({ length: 12 }, (_, i) => ({ payload: `cli-${i}` })),
    );
    const created = await runCli(['backup', 'create', '--project', PROJECT, '--data', s.dataDir, '--to', dest.url], s.env);
    expect(created.code, created.stderr).toBe(0);
    const id = created.stdout.trim();
    await createRows(s, 'big', [{ payload: 'after the snapshot' }]);
    const list = await runCli(['backup', 'list', '--from', dest.url, '--json']);
    expect((JSON.parse(list.stdout) as { snapshots: { id: string }[] }).snapshots.map((x) => x.id)).toEqual([id]);
    const target = await restoreInto(folders, dest.url);
    const back = await startServer({ dataDir: target, env: s.env });
    servers.push(back);
    expect((await listRows(back, 'big')).map((x) => x.payload).sort()).toEqual(before.map((x) => x.payload).sort());
  }, 180_000);
});
