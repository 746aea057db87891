/**
 * The backup's worker thread (docs/reference/backups.md): runs a WalShipper for the main thread
 * (wal-worker.ts), and uploads snapshots. The shipper's requests are handled one at a time, in the
 * order sent: the main thread relies on a checkpoint's tail being taken before the next read of
 * the WAL. A snapshot runs beside them, not in that chain: its upload (hundreds of MB, seconds)
 * would otherwise hold back every sync behind it. The main thread sends it only once its
 * `position` and the `ship` through that position are answered, so those come first.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openDestination } from './open.js';
import { uploadSnapshot } from './snapshot.js';
import type { ToShipper } from './wal-worker.js';
import { WalShipper } from './wal-shipper.js';
import { WalBackfill } from '../storage/sqlite/wal-backfill.js';

const port = parentPort!;
const { file, url } = workerData as { file: string; url: string };

/** Opened on the first backfill: a connection of this thread's own (wal-backfill.ts). */
const backfill = new WalBackfill(file);
const opened = openDestination(url);
let chain: Promise<WalShipper> = opened.then((dest) => new WalShipper(dest, file));
chain.catch(() => undefined); // reported to each request below

type Chained = Exclude<ToShipper, { op: 'snapshot' }>;

async function handle(s: WalShipper, m: Chained): Promise<unknown> {
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

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

port.on('message', (m: ToShipper) => {
  if (m.op === 'snapshot') {
    // The database file, hashed as it streams, then its manifest (snapshot.ts): off the main thread.
    opened
      .then((dest) => uploadSnapshot(dest, { generation: m.generation, file, takenAtMs: m.takenAtMs, database: 'sqlite', position: m.position }))
      .then(
        (value) => port.postMessage({ id: m.id, value }),
        (err: unknown) => port.postMessage({ id: m.id, error: message(err) }),
      );
    return;
  }
  chain = chain.then(async (s) => {
    try {
      const value = await handle(s, m);
      port.postMessage({ id: m.id, value });
    } catch (err) {
      port.postMessage({ id: m.id, error: message(err) });
    }
    return s;
  });
  // A destination that cannot be opened fails every request (the main thread counts failures).
  chain.catch((err: unknown) => port.postMessage({ id: m.id, error: message(err) }));
});
