/**
 * The bounded in-memory request log behind the dashboard's Logs screen (docs/reference/dashboard.md): time,
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

/**
 * Column arrays, not one entry object per request: an entry outlives several young-generation
 * collections at load, so an object per request was promoted and collected in the old generation
 * (measured as GC time on the bench's get-by-id). Entries are built only when the log is read.
 */
export class RequestLog {
  readonly #at: Float64Array;
  readonly #status: Uint16Array;
  readonly #latency: Float64Array;
  readonly #method: string[];
  readonly #route: string[];
  readonly #requestId: string[];
  readonly #ip: string[];
  #next = 0;
  #count = 0;

  constructor(readonly size = DEFAULT_LOG_SIZE) {
    this.#at = new Float64Array(size);
    this.#status = new Uint16Array(size);
    this.#latency = new Float64Array(size);
    this.#method = new Array<string>(size).fill('');
    this.#route = new Array<string>(size).fill('');
    this.#requestId = new Array<string>(size).fill('');
    this.#ip = new Array<string>(size).fill('');
  }

  record(entry: RequestEntry): void {
    this.add(entry.at, entry.method, entry.route, entry.status, entry.latencyMs, entry.requestId, entry.ip);
  }

  /** record() without the entry object (the per-request path). */
  add(at: number, method: string, route: string, status: number, latencyMs: number, requestId: string, ip: string): void {
    const i = this.#next;
    this.#at[i] = at;
    this.#method[i] = method;
    this.#route[i] = route;
    this.#status[i] = status;
    this.#latency[i] = latencyMs;
    this.#requestId[i] = requestId;
    this.#ip[i] = ip;
    this.#next = (i + 1) % this.size;
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
    for (let n = 1; n <= this.#count && out.length < limit; n++) {
      const i = (this.#next - n + this.size) % this.size;
      const status = this.#status[i]!;
      if (cls !== undefined && Math.floor(status / 100) !== cls) continue;
      if (q.route && !this.#route[i]!.includes(q.route)) continue;
      if (q.requestId && this.#requestId[i] !== q.requestId) continue;
      out.push({ at: this.#at[i]!, method: this.#method[i]!, route: this.#route[i]!, status, latencyMs: this.#latency[i]!, requestId: this.#requestId[i]!, ip: this.#ip[i]! });
    }
    return out;
  }
}
