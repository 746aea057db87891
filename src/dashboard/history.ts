/**
 * Per-minute metrics for the last hour (docs/reference/dashboard.md Overview charts): requests, errors (5xx and
 * 4xx separately), p95 latency, open streams and write-queue depth. Buckets are closed as time
 * moves on; the current minute is reported as it stands. Latency samples per minute are capped,
 * so a busy minute costs bounded memory.
 */

export interface MinuteSample {
  /** Start of the minute, epoch milliseconds. */
  readonly at: number;
  readonly requests: number;
  readonly clientErrors: number;
  readonly serverErrors: number;
  readonly p95Ms: number;
  readonly streams: number;
  readonly writeQueue: number;
}

interface Bucket {
  at: number;
  requests: number;
  clientErrors: number;
  serverErrors: number;
  latencies: number[];
}

const MINUTE = 60_000;
const KEEP = 60;
const MAX_SAMPLES = 2048;

export interface Gauges {
  streams(): number;
  writeQueue(): number;
}

function p95(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(0.95 * sorted.length))]! * 100) / 100;
}

export class MetricsHistory {
  readonly #closed: MinuteSample[] = [];
  #current: Bucket;
  readonly #gauges: Gauges;
  readonly #now: () => number;

  constructor(gauges: Gauges, now: () => number = Date.now) {
    this.#gauges = gauges;
    this.#now = now;
    this.#current = this.#fresh(this.#minute(now()));
  }

  #minute(t: number): number {
    return t - (t % MINUTE);
  }

  #fresh(at: number): Bucket {
    return { at, requests: 0, clientErrors: 0, serverErrors: 0, latencies: [] };
  }

  #sample(b: Bucket): MinuteSample {
    return {
      at: b.at,
      requests: b.requests,
      clientErrors: b.clientErrors,
      serverErrors: b.serverErrors,
      p95Ms: p95(b.latencies),
      streams: this.#gauges.streams(),
      writeQueue: this.#gauges.writeQueue(),
    };
  }

  /** Closes the current bucket when its minute is over (empty minutes in between count as zero). */
  #roll(now = this.#now()): void {
    const minute = this.#minute(now);
    if (minute === this.#current.at) return;
    this.#closed.push(this.#sample(this.#current));
    for (let at = this.#current.at + MINUTE; at < minute && minute - at < KEEP * MINUTE; at += MINUTE) this.#closed.push({ ...this.#sample(this.#fresh(at)) });
    if (this.#closed.length > KEEP) this.#closed.splice(0, this.#closed.length - KEEP);
    this.#current = this.#fresh(minute);
  }

  /** `now`: the caller's clock reading, when it has one (saves a second Date.now per request). */
  record(status: number, latencyMs: number, now?: number): void {
    this.#roll(now);
    const b = this.#current;
    b.requests++;
    if (status >= 500) b.serverErrors++;
    else if (status >= 400) b.clientErrors++;
    if (b.latencies.length < MAX_SAMPLES) b.latencies.push(latencyMs);
    else b.latencies[b.requests % MAX_SAMPLES] = latencyMs; // keep a spread of the minute
  }

  /** The last hour, oldest first, the current (partial) minute last. */
  samples(): MinuteSample[] {
    this.#roll();
    const cutoff = this.#current.at - KEEP * MINUTE;
    return [...this.#closed.filter((s) => s.at > cutoff), this.#sample(this.#current)];
  }
}
