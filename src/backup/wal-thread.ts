/**
 * The backup's worker thread (docs/reference/backups.md): runs a WalShipper for the main thread
 * (wal-worker.ts). Requests are handled one at a time, in the order sent: the main thread relies
 * on a checkpoint's tail being taken before the next read of the WAL.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openDestination } from './open.js';
import type { ToShipper } from './wal-worker.js';
import { WalShipper } from './wal-shipper.js';
import { WalBackfill } from '../storage/sqlite/wal-backfill.js';

const port = parentPort!;
const { file, url } = workerData as { file: string; url: string };

/** Opened on the first backfill: a connection of this thread's own (wal-backfill.ts). */
const backfill = new WalBackfill(file);
let chain: Promise<WalShipper> = openDestination(url).then((dest) => new WalShipper(dest, file));
chain.catch(() => undefined); // reported to each request below

async function handle(s: WalShipper, m: ToShipper): Promise<unknown> {
  switch (m.op) {
    case 'generation':
      return s.newGeneration(m.gen, m.marks);
    case 'ship':
      return s.ship(m.marks, m.at);
    case 'copy':
      return s.copy(m.marks, m.at);
    case 'position':
      return s.position(m.marks);
    case 'tail':
      return s.appendTail(Buffer.from(m.tail.buffer, m.tail.byteOffset, m.tail.byteLength), m.marks, m.frames);
    case 'backfill':
      return backfill.run();
    case 'close':
      backfill.close();
      return s.close();
  }
}

port.on('message', (m: ToShipper) => {
  chain = chain.then(async (s) => {
    try {
      const value = await handle(s, m);
      port.postMessage({ id: m.id, value });
    } catch (err) {
      port.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) });
    }
    return s;
  });
  // A destination that cannot be opened fails every request (the main thread counts failures).
  chain.catch((err: unknown) => port.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) }));
});
