/**
 * Figures of one process of the server, for the dashboard's per-process table
 * (docs/reference/dashboard.md Overview, `processes` of /dashboard/metrics): with
 * `serve --workers` one row for the primary and one per worker, merged by the primary when it
 * gathers the workers' live figures (src/cluster/ipc-worker.ts); one row in a single process.
 *
 * What tells an operator where a server's time goes: requests per second each process took
 * (a worker counts what it answered and what it forwarded; the primary what it ran: forwarded
 * writes and server-wide reads), the live streams each holds, its memory, and its event-loop
 * delay (a saturated process shows it there first).
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

export interface ProcessFigures {
  readonly role: 'single' | 'primary' | 'worker';
  /** node:cluster's worker id (1, 2, … ; a replaced worker gets a new one); 0 for the primary or a single process. */
  readonly id: number;
  readonly pid: number;
  readonly uptimeSeconds: number;
  /** Requests answered or forwarded by this process, per second over the last 10 complete seconds. */
  readonly requestsPerSecond: number;
  /** Live streams and /db/live subscriptions open in this process, and the distinct queries they share. */
  readonly streams: number;
  readonly queries: number;
  readonly memory: { readonly rssBytes: number; readonly heapUsedBytes: number };
  /** Event-loop delay since the previous reading (ms; 20 ms sampling). */
  readonly eventLoopDelayMs: { readonly p50: number; readonly p99: number; readonly max: number };
}

/** Seconds in the requests-per-second window, plus the current one (not counted: incomplete). */
const WINDOW = 11;

export class ProcessMeter {
  readonly #buckets = new Float64Array(WINDOW);
  #second = Math.floor(Date.now() / 1000);
  readonly #started = Date.now();
  readonly #delay: IntervalHistogram;

  constructor(
    readonly role: ProcessFigures['role'],
    readonly id = 0,
  ) {
    this.#delay = monitorEventLoopDelay({ resolution: 20 });
    this.#delay.enable();
  }

  /** One request taken (answered here, or forwarded). */
  count(): void {
    const s = Math.floor(Date.now() / 1000);
    if (s !== this.#second) this.#advance(s);
    this.#buckets[s % WINDOW]! += 1;
  }

  figures(live: { readonly open: number; readonly queries: number }): ProcessFigures {
    const s = Math.floor(Date.now() / 1000);
    if (s !== this.#second) this.#advance(s);
    let n = 0;
    for (let i = 0; i < WINDOW; i++) if (i !== s % WINDOW) n += this.#buckets[i]!;
    // A process younger than the window has fewer complete seconds behind it.
    const seconds = Math.max(1, Math.min(WINDOW - 1, s - Math.floor(this.#started / 1000)));
    const mem = process.memoryUsage();
    const h = this.#delay;
    const ms = (ns: number) => (Number.isFinite(ns) ? Math.round(ns / 1e4) / 100 : 0);
    const delay = h.count > 0 ? { p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max) } : { p50: 0, p99: 0, max: 0 };
    h.reset();
    return {
      role: this.role,
      id: this.id,
      pid: process.pid,
      uptimeSeconds: Math.round((Date.now() - this.#started) / 1000),
      requestsPerSecond: Math.round((n / seconds) * 10) / 10,
      streams: live.open,
      queries: live.queries,
      memory: { rssBytes: mem.rss, heapUsedBytes: mem.heapUsed },
      eventLoopDelayMs: delay,
    };
  }

  close(): void {
    this.#delay.disable();
  }

  /** Empties the buckets of the seconds that passed without a request. */
  #advance(s: number): void {
    for (let t = Math.max(this.#second + 1, s - WINDOW + 1); t <= s; t++) this.#buckets[t % WINDOW] = 0;
    this.#second = s;
  }
}
