/**
 * What `/health` knows beyond a ping (docs/reference/http-api.md `/health`): infrastructure
 * failures seen by requests (core/errors.ts `InfrastructureError`). A full disk keeps `/health`
 * at 503 until a write succeeds again — a committed write, or the probe `/health` runs while the
 * disk is marked down (a small file written and removed in the data folder) — so service resumes
 * without a restart once space is freed. A database outage is reflected by the ping itself.
 *
 * With `serve --workers` the writer is the primary's, and `/health` is the workers': the primary
 * tells them when its disk goes down or comes back (`onDisk`, src/server/primary.ts), and a worker
 * told so probes the same data folder on its `/health` as one process does.
 */
import type { Infrastructure } from './errors.js';

export interface HealthStateOptions {
  /** Can the data folder take a write again? */
  probeDisk(): Promise<boolean>;
}

export class HealthState {
  #down = new Map<Infrastructure, number>();
  #probeDisk: () => Promise<boolean>;
  #diskListener: ((down: boolean) => void) | undefined;

  constructor(o: HealthStateOptions) {
    this.#probeDisk = o.probeDisk;
  }

  /** Told when the disk is marked down and when it takes writes again (the primary tells its workers). */
  onDisk(listener: (down: boolean) => void): void {
    this.#diskListener = listener;
  }

  /** Whether the disk is marked down now (no probe). */
  get diskDown(): boolean {
    return this.#down.has('disk');
  }

  fail(what: Infrastructure): void {
    if (this.#down.has(what)) return;
    this.#down.set(what, Date.now());
    if (what === 'disk') this.#diskListener?.(true);
  }

  recover(what: Infrastructure): void {
    if (this.#down.delete(what) && what === 'disk') this.#diskListener?.(false);
  }

  /** A write committed: the disk takes writes. Cheap: called on every commit. */
  wrote(): void {
    if (this.#down.size > 0) this.recover('disk');
  }

  /** The parts still down after re-checking the disk when it was marked down. */
  async check(): Promise<Infrastructure[]> {
    if (this.#down.has('disk') && (await this.#probeDisk().catch(() => false))) this.recover('disk');
    return [...this.#down.keys()];
  }
}
