/**
 * Can the data folder take a write? `/health` asks while a full disk is marked down
 * (core/health-state.ts): 64 KiB written, synced and removed — enough that SQLite's next page and
 * WAL frame have room too.
 */
import { open, unlink } from 'node:fs/promises';
import { join } from 'node:path';

const PROBE_BYTES = 64 * 1024;

export async function diskTakesWrites(dataDir: string): Promise<boolean> {
  const path = join(dataDir, `.health-probe-${process.pid}`);
  try {
    const f = await open(path, 'w');
    try {
      await f.write(Buffer.alloc(PROBE_BYTES));
      await f.sync();
    } finally {
      await f.close();
    }
    return true;
  } catch {
    return false;
  } finally {
    await unlink(path).catch(() => undefined);
  }
}
