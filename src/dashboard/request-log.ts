/**
 * The bounded in-memory request log behind the dashboard's Logs screen (SPEC §11a): time,
 * method, route, status, latency, request id and client IP of recent requests. Never bodies,
 * query strings or headers, so no token or password can land here. A fixed-size ring: memory
 * stays bounded whatever the traffic.
 */

export interface RequestEntry {
  /** Epoch milliseconds when the answer finished. */
  readonly at: number;
  readonly method: string;
  /** The matched route (`GET /db/list`), or `unmatched`. */
  readonly route: string;
  readonly status: number;
  readonly latencyMs: number;
  readonly requestId: string;
  readonly ip: string;
}

export interface LogQuery {
  /** `2xx`, `3xx`, `4xx` or `5xx`. */
  readonly statusClass?: string;
  /** Substring of the route. */
  readonly route?: string;
  /** Exact request id. */
  readonly requestId?: string;
  /** Newest first; default 200, at most the ring size. */
  readonly limit?: number;
}

export const DEFAULT_LOG_SIZE = 2000;

export class RequestLog {
  readonly #ring: (RequestEntry | undefined)[];
  #next = 0;
  #count = 0;

  constructor(readonly size = DEFAULT_LOG_SIZE) {
    this.#ring = new Array(size);
  }

  record(entry: RequestEntry): void {
    this.#ring[this.#next] = entry;
    this.#next = (this.#next + 1) % this.size;
    if (this.#count < this.size) this.#count++;
  }

  get count(): number {
    return this.#count;
  }

  /** Entries matching every given filter, newest first. */
  query(q: LogQuery = {}): RequestEntry[] {
    const limit = Math.max(1, Math.min(q.limit ?? 200, this.size));
    const cls = q.statusClass ? Number(q.statusClass[0]) : undefined;
    const out: RequestEntry[] = [];
    for (let i = 1; i <= this.#count && out.length < limit; i++) {
      const e = this.#ring[(this.#next - i + this.size) % this.size]!;
      if (cls !== undefined && Math.floor(e.status / 100) !== cls) continue;
      if (q.route && !e.route.includes(q.route)) continue;
      if (q.requestId && e.requestId !== q.requestId) continue;
      out.push(e);
    }
    return out;
  }
}
