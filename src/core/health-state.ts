/**
 * What `/health` knows beyond a ping (docs/reference/http-api.md `/health`): infrastructure
 * failures seen by requests (core/errors.ts `InfrastructureError`). A full disk keeps `/health`
 * at 503 until a write succeeds again — a committed write, or the probe `/health` runs while the
 * disk is marked down (a small file written and removed in the data folder) — so service resumes
 * without a restart once space is freed. A database outage is reflected by the ping itself.
 */
import type { Infrastructure } from './errors.js';

export interface HealthStateOptions {
  /** Can the data folder take a write again? */
  probeDisk(): Promise<boolean>;
}

export class HealthState {
  #down = new Map<Infrastructure, number>();
  #probeDisk: () => Promise<boolean>;

  constructor(o: HealthStateOptions) {
    this.#probeDisk = o.probeDisk;
  }

  fail(what: Infrastructure): void {
    if (!this.#down.has(what)) this.#down.set(what, Date.now());
  }

  recover(what: Infrastructure): void {
    this.#down.delete(what);
  }

  /** A write committed: the disk takes writes. Cheap: called on every commit. */
  wrote(): void {
    if (this.#down.size > 0) this.#down.delete('disk');
  }

  /** The parts still down after re-checking the disk when it was marked down. */
  async check(): Promise<Infrastructure[]> {
    if (this.#down.has('disk') && (await this.#probeDisk().catch(() => false))) this.#down.delete('disk');
    return [...this.#down.keys()];
  }
}
