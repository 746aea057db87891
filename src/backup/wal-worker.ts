/**
 * The main thread's handle on the backup's worker thread (wal-thread.ts): requests answered by id.
 * A worker that dies fails every request waiting for it (a snapshot's upload included) at once.
 * The worker runs TypeScript in a checkout (through tsx, which a worker thread does not inherit:
 * it is registered there first) and the compiled JavaScript in the installed package (dist/).
 */
import { Worker } from 'node:worker_threads';
import type { WalPosition } from '../storage/sqlite/wal.js';
import type { BackfillResult } from '../storage/sqlite/wal-backfill.js';
import type { SnapshotManifest } from './layout.js';
import type { ShipperState } from './wal-shipper.js';

export interface Marks {
  sizes: Float64Array;
  times: Float64Array;
}

/** Messages to the worker; each is answered with its id (`value` or `error`). */
export type ToShipper =
  | { id: number; op: 'generation'; gen: string; marks: Marks }
  | { id: number; op: 'ship'; marks: Marks; at: number }
  | { id: number; op: 'copy'; marks: Marks; at: number }
  | { id: number; op: 'position'; marks: Marks }
  | { id: number; op: 'tail'; tail: Uint8Array; marks: Marks; frames: number }
  | { id: number; op: 'backfill' }
  /** Uploads the database file as a snapshot from `position` (answered before it is sent): runs beside the others. */
  | { id: number; op: 'snapshot'; generation: string; takenAtMs: number; position: WalPosition }
  | { id: number; op: 'close' };

type Op = ToShipper extends infer T ? (T extends { op: infer O } ? O : never) : never;
type Args<O extends Op> = Omit<Extract<ToShipper, { op: O }>, 'id' | 'op'>;
interface Answers {
  generation: void;
  ship: ShipperState;
  copy: ShipperState;
  position: WalPosition;
  tail: void;
  backfill: BackfillResult;
  snapshot: SnapshotManifest;
  close: void;
}

const BOOT = `
const { workerData } = require('node:worker_threads');
(async () => {
  if (workerData.tsx) (await import(workerData.tsx)).register();
  await import(workerData.entry);
})().catch((err) => { setImmediate(() => { throw err; }); });
`;

export class WalWorker {
  #worker: Worker;
  #next = 1;
  #waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  /** Set when the worker died: every request fails until the owner starts a new one. */
  dead: Error | null = null;

  constructor(file: string, url: string) {
    const ts = import.meta.url.endsWith('.ts');
    const entry = new URL(`./wal-thread.${ts ? 'ts' : 'js'}`, import.meta.url).href;
    this.#worker = new Worker(BOOT, { eval: true, workerData: { file, url, entry, tsx: ts ? import.meta.resolve('tsx/esm/api') : null } });
    this.#worker.unref();
    this.#worker.on('message', (m: { id: number; value?: unknown; error?: string }) => {
      const w = this.#waiting.get(m.id);
      this.#waiting.delete(m.id);
      if (m.error !== undefined) w?.reject(new Error(m.error));
      else w?.resolve(m.value);
    });
    this.#worker.on('error', (err) => this.#die(err));
    this.#worker.on('exit', (code) => this.#die(new Error(`the backup worker exited (${code})`)));
  }

  #die(err: Error): void {
    this.dead ??= err;
    for (const w of this.#waiting.values()) w.reject(err);
    this.#waiting.clear();
  }

  request<O extends Op>(op: O, args: Args<O>, transfer: ArrayBuffer[] = []): Promise<Answers[O]> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.#worker.postMessage({ id, op, ...args }, transfer);
    });
  }

  async terminate(): Promise<void> {
    this.dead ??= new Error('the backup worker was stopped');
    await this.#worker.terminate();
  }
}
