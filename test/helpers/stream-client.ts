/**
 * A client for the live-query routes in end-to-end tests (docs/reference/live.md). It opens one HTTP request on
 * its own socket, parses the framing it asked for (SSE by default, NDJSON with `format:
 * 'ndjson'`) into frames, and lets a test await them in order. It keeps the raw text too, so the
 * framing itself can be asserted byte for byte.
 *
 * Answers that are not a stream (403, 429, 400, 404 before streaming) come back as `status` and
 * `json` with no frames. `abort()` resets the TCP connection, the rudest way a client can leave.
 */
import { request, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { parseJson, type Envelope } from './server.js';

export type StreamFormat = 'sse' | 'ndjson';

/** One payload (or error) frame. Heartbeats are counted, not framed. */
export interface Frame {
  /** SSE `id:`; absent for NDJSON. */
  id?: string;
  /** SSE `event:` (`error` for the closing error frame); absent for NDJSON. */
  event?: string;
  /** The parsed JSON document: `{data}` or `{error}`. */
  json: Envelope;
}

export interface OpenOptions {
  format?: StreamFormat;
  /** Sent as is; overrides the Accept the format implies. */
  headers?: Record<string, string>;
  /** Source address for the connection (another loopback IP counts as another client). */
  localAddress?: string;
}

export interface StreamClient {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** Parsed body of an answer that is not a stream (an error before streaming); undefined until it ended. */
  readonly json: Envelope;
  /** Every frame received so far, in order. */
  readonly frames: readonly Frame[];
  /** Everything received, undecoded framing included. */
  readonly raw: string;
  /** SSE `: ping` comments or NDJSON empty lines seen. */
  readonly heartbeats: number;
  readonly ended: boolean;
  /** The next frame not yet taken by `next`; rejects after `timeoutMs` or when the stream ends first. */
  next(timeoutMs?: number): Promise<Frame>;
  /** Takes frames until one satisfies `pred`; that one is answered. */
  nextWhere(pred: (f: Frame) => boolean, timeoutMs?: number): Promise<Frame>;
  /** Resolves when the server ends the response (or the socket closes). */
  whenEnded(timeoutMs?: number): Promise<void>;
  /** Resolves once `heartbeats` reaches `n`. */
  whenHeartbeats(n: number, timeoutMs?: number): Promise<void>;
  /** Closes the socket with a FIN. */
  close(): void;
  /** Closes the socket with a TCP RST. */
  abort(): void;
}

export const DEFAULT_WAIT_MS = 15_000;

export function streamUrl(base: string, route: string, body: unknown): string {
  return `${base}${route}?body=${encodeURIComponent(JSON.stringify(body))}`;
}

/** Opens a stream; resolves once the response head arrived (status and headers known). */
export function openStream(base: string, route: string, body: unknown, options: OpenOptions = {}): Promise<StreamClient> {
  const format = options.format ?? 'sse';
  const headers = { accept: format === 'ndjson' ? 'application/x-ndjson' : 'text/event-stream', ...options.headers };
  return new Promise((resolve, reject) => {
    const req = request(streamUrl(base, route, body), { headers, agent: false, ...(options.localAddress ? { localAddress: options.localAddress } : {}) });
    req.once('error', reject);
    req.once('response', (res) => {
      req.off('error', reject);
      req.on('error', () => {}); // an abort() later surfaces here; the client already knows
      resolve(new Client(res, format));
    });
    req.end();
  });
}

type Waiter = { check: () => boolean; resolve: () => void; reject: (e: Error) => void; timer: NodeJS.Timeout };

class Client implements StreamClient {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  json!: Envelope; // undefined until a non-stream answer ended
  frames: Frame[] = [];
  raw = '';
  heartbeats = 0;
  ended = false;
  #res: IncomingMessage;
  #format: StreamFormat;
  #streaming: boolean;
  #buf = '';
  #taken = 0;
  #waiters = new Set<Waiter>();

  constructor(res: IncomingMessage, format: StreamFormat) {
    this.#res = res;
    this.#format = format;
    this.status = res.statusCode ?? 0;
    this.headers = res.headers;
    this.#streaming = this.status === 200 && /^(text\/event-stream|application\/x-ndjson)/.test(String(res.headers['content-type']));
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      this.raw += chunk;
      if (this.#streaming) this.#parse(chunk);
    });
    const done = () => {
      if (this.ended) return;
      this.ended = true;
      if (!this.#streaming) {
        this.json = parseJson<Envelope>(this.raw);
      }
      this.#notify();
    };
    res.on('end', done);
    res.on('close', done);
    res.on('error', done);
  }

  #parse(chunk: string): void {
    this.#buf += chunk;
    const sep = this.#format === 'sse' ? '\n\n' : '\n';
    let at: number;
    while ((at = this.#buf.indexOf(sep)) >= 0) {
      const block = this.#buf.slice(0, at);
      this.#buf = this.#buf.slice(at + sep.length);
      if (this.#format === 'ndjson') {
        if (block.trim() === '') this.heartbeats++;
        else this.frames.push({ json: JSON.parse(block) });
        continue;
      }
      const frame: Partial<Frame> = {};
      const data: string[] = [];
      let comment = false;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) comment = true;
        else if (line.startsWith('id: ')) frame.id = line.slice(4);
        else if (line.startsWith('event: ')) frame.event = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      if (data.length > 0) this.frames.push({ ...frame, json: JSON.parse(data.join('\n')) });
      else if (comment) this.heartbeats++;
    }
    this.#notify();
  }

  #notify(): void {
    for (const w of [...this.#waiters]) {
      if (w.check()) {
        this.#waiters.delete(w);
        clearTimeout(w.timer);
        w.resolve();
      } else if (this.ended) {
        this.#waiters.delete(w);
        clearTimeout(w.timer);
        w.reject(new Error(`stream ended while waiting; frames: ${JSON.stringify(this.frames.map((f) => f.json))}`));
      }
    }
  }

  #wait(check: () => boolean, what: string, timeoutMs: number, endOk = false): Promise<void> {
    if (check()) return Promise.resolve();
    if (this.ended && !endOk) return Promise.reject(new Error(`stream already ended; waited for ${what}`));
    return new Promise((resolve, reject) => {
      const w: Waiter = {
        check,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.#waiters.delete(w);
          reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; frames so far: ${JSON.stringify(this.frames.map((f) => f.json))}`));
        }, timeoutMs),
      };
      this.#waiters.add(w);
    });
  }

  async next(timeoutMs = DEFAULT_WAIT_MS): Promise<Frame> {
    await this.#wait(() => this.frames.length > this.#taken, 'the next frame', timeoutMs);
    return this.frames[this.#taken++]!;
  }

  async nextWhere(pred: (f: Frame) => boolean, timeoutMs = DEFAULT_WAIT_MS): Promise<Frame> {
    let found: Frame | undefined;
    const scan = () => {
      while (!found && this.frames.length > this.#taken) {
        const f = this.frames[this.#taken++]!;
        if (pred(f)) found = f;
      }
      return found !== undefined;
    };
    await this.#wait(scan, 'a matching frame', timeoutMs);
    return found!;
  }

  whenEnded(timeoutMs = DEFAULT_WAIT_MS): Promise<void> {
    return this.#wait(() => this.ended, 'the end of the stream', timeoutMs, true);
  }

  whenHeartbeats(n: number, timeoutMs = DEFAULT_WAIT_MS): Promise<void> {
    return this.#wait(() => this.heartbeats >= n, `${n} heartbeats`, timeoutMs);
  }

  close(): void {
    this.#res.socket?.destroy();
    this.#res.destroy();
  }

  abort(): void {
    const socket = this.#res.socket;
    if (socket && typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
    else socket?.destroy();
    this.#res.destroy();
  }
}
