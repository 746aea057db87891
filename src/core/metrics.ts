/**
 * Request metrics for /dashboard/metrics (docs/reference/dashboard.md): counts by route and status, and latency
 * percentiles over a ring of the most recent requests (cheap to record, exact for that window).
 */
const RING = 8192;

export class Metrics {
  readonly startedAt = Date.now();
  total = 0;
  rateLimited = 0;
  /** Requests their client abandoned (mid-body or before the answer): not server errors. */
  aborted = 0;
  readonly byStatus = new Map<number, number>();
  readonly byRoute = new Map<string, number>();
  #latencies = new Float64Array(RING);
  #at = 0;
  #filled = 0;

  record(route: string, status: number, ms: number): void {
    this.total++;
    this.byStatus.set(status, (this.byStatus.get(status) ?? 0) + 1);
    this.byRoute.set(route, (this.byRoute.get(route) ?? 0) + 1);
    if (status === 429) this.rateLimited++;
    this.#latencies[this.#at] = ms;
    this.#at = (this.#at + 1) % RING;
    if (this.#filled < RING) this.#filled++;
  }

  /** A request its client abandoned: counted apart, not in `byStatus` (no status reached anyone). */
  recordAborted(route: string): void {
    this.total++;
    this.aborted++;
    this.byRoute.set(route, (this.byRoute.get(route) ?? 0) + 1);
  }

  latency(): { p50: number; p95: number; p99: number } {
    if (this.#filled === 0) return { p50: 0, p95: 0, p99: 0 };
    const sorted = this.#latencies.slice(0, this.#filled).sort();
    const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 100) / 100;
    return { p50: at(0.5), p95: at(0.95), p99: at(0.99) };
  }
}
