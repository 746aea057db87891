/**
 * Restore at T1 and T2, taken between phases of creates, updates and deletes, gives exactly each
 * phase's rows, across a WAL checkpoint (a new epoch) between them (docs/reference/backups.md).
 * The restores run while the server still serves.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pause } from '../helpers/poll.js';
import { createRows, listRows, write } from '../helpers/rows.js';
import { startServer, type Row } from '../helpers/server.js';
import { backupScene, restoreInto } from './helpers.js';

const byId = (rows: Row[]) => [...rows].sort((a, b) => (a.id < b.id ? -1 : 1));

describe('point-in-time restore', () => {
  const { dest, servers, folders } = backupScene();

  async function restoredRows(at: number): Promise<Row[]> {
    const target = await restoreInto(folders, dest.url, { at });
    const s = await startServer({ dataDir: target });
    servers.push(s);
    try {
      return byId(await listRows(s, 'big'));
    } finally {
      await s.stop();
    }
  }

  it('gives exactly the state of each phase', async () => {
    const s = await startServer({ args: ['--backup', dest.url] });
    servers.push(s);
    // Phase 1: creates.
    const first = await createRows(
      s,
      'big',
      Array.from({ length: 20 }, (_, i) => ({ payload: `p1-${i}` })),
    );
    const phase1 = byId(await listRows(s, 'big'));
    expect(phase1).toHaveLength(20);
    await pause(1_200);
    const t1 = Date.now();
    await pause(1_200);
    // Phase 2: updates, deletes, creates; over 4 MB of WAL, so the backup checkpoints meanwhile.
    for (const row of first.slice(0, 10)) await write(s, 'PATCH', '/db', { table: 'big', where: { id: { eq: row.id } }, updates: [{ column: 'payload', value: `p2-${row.id}` }] });
    for (const row of first.slice(10, 15)) await write(s, 'DELETE', '/db', { table: 'big', where: { id: { eq: row.id } } });
    for (let i = 0; i < 20; i++)
      await createRows(
        s,
        'big',
        Array.from({ length: 4 }, (_, j) => ({ payload: `p2-big-${i}-${j}-${'y'.repeat(60_000)}` })),
      );
    const phase2 = byId(await listRows(s, 'big'));
    await pause(1_200);
    const t2 = Date.now();
    await pause(1_200);
    // Phase 3: everything goes.
    for (const row of phase2) await write(s, 'DELETE', '/db', { table: 'big', where: { id: { eq: row.id } } });
    await pause(2_500);

    const epochs = readdirSync(join(dest.dir, 'generations', readdirSync(join(dest.dir, 'generations'))[0]!, 'wal'));
    expect(epochs.length, 'the WAL was checkpointed and restarted between T1 and T2').toBeGreaterThan(1);
    expect(await restoredRows(t1)).toEqual(phase1);
    expect(await restoredRows(t2)).toEqual(phase2);
    expect(await restoredRows(Date.now() - 2_500)).toEqual([]);
    expect(existsSync(dest.dir)).toBe(true);
  }, 300_000);
});
