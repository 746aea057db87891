/**
 * Live queries over one `/db/live` WebSocket (docs/reference/live.md): every `stream`,
 * `streamList` and `streamCount` of a client shares the connection. It opens with the first
 * subscription and closes with the last; when it drops it reconnects with exponential backoff and
 * jitter (capped at 30 s), subscribes again and delivers the current result; a refreshed access
 * token goes to the open connection as an `auth` message. Copied verbatim into the generated
 * client like runtime.ts (the import line below is dropped there), so it uses only the platform's
 * WebSocket.
 */

/** What the connection needs of the client's transport (runtime.ts), kept apart so neither file imports the other both ways. */
export interface LiveAuth {
  token(): Promise<string | null>;
  refresh(): Promise<unknown>;
  onToken(listener: (token: string | null) => void): () => void;
  /** The client's error (a TablebaseError) for a server `error` message. */
  error(status: number, message: unknown): Error;
}

/** The part of the WebSocket API the client uses (the browser's, or Node's `ws`). */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: unknown) => void) | null;
  onerror: ((event: unknown) => void) | null;
}

export type WebSocketConstructor = new (url: string, protocols?: string | string[]) => WebSocketLike;

const OPEN = 1;
const BACKOFF_FIRST_MS = 500;
const BACKOFF_CAP_MS = 30_000;
/** A ping every 15 s; a connection silent for 45 s is taken as dead and replaced. */
const PING_MS = 15_000;
const SILENT_MS = 45_000;

interface Subscription {
  readonly id: string;
  readonly route: 'get' | 'list' | 'count';
  readonly body: unknown;
  /** The last payload delivered, as JSON: a resubscribe that finds nothing changed delivers nothing. */
  last: string | undefined;
  push(value: unknown): void;
  fail(err: Error): void;
}

interface ServerMessage {
  type?: string;
  id?: string;
  data?: unknown;
  status?: number;
  error?: unknown;
}

export class LiveSocket {
  readonly #t: LiveAuth;
  readonly #Ws: WebSocketConstructor;
  readonly #url: string;
  readonly #subs = new Map<string, Subscription>();
  #ws: WebSocketLike | undefined;
  #attempt = 0;
  #seq = 0;
  #retry: ReturnType<typeof setTimeout> | undefined;
  #ping: ReturnType<typeof setInterval> | undefined;
  #heard = 0;
  #offToken: (() => void) | undefined;

  constructor(t: LiveAuth, Ws: WebSocketConstructor, url: string) {
    this.#t = t;
    this.#Ws = Ws;
    this.#url = url;
  }

  subscribe<T>(route: Subscription['route'], body: unknown): SocketStream<T> {
    return new SocketStream<T>(this, route, body);
  }

  /** @internal SocketStream's first next(). */
  add(route: Subscription['route'], body: unknown, push: (v: unknown) => void, fail: (e: Error) => void): string {
    const id = `q${++this.#seq}`;
    this.#subs.set(id, { id, route, body, last: undefined, push, fail });
    if (this.#ws?.readyState === OPEN) this.#send({ type: 'subscribe', id, route, body });
    else if (!this.#ws && !this.#retry) void this.#connect();
    return id;
  }

  /** @internal SocketStream's close(). */
  remove(id: string): void {
    if (!this.#subs.delete(id)) return;
    if (this.#ws?.readyState === OPEN) this.#send({ type: 'unsubscribe', id });
    if (this.#subs.size === 0) this.#stop();
  }

  #send(message: object): void {
    try {
      this.#ws?.send(JSON.stringify(message));
    } catch {
      // the socket is closing: onclose reconnects and resubscribes
    }
  }

  async #connect(): Promise<void> {
    this.#retry = undefined;
    if (this.#subs.size === 0 || this.#ws) return;
    let ws: WebSocketLike;
    try {
      ws = new this.#Ws(this.#url, 'tablebase.v1');
    } catch {
      this.#reconnect();
      return;
    }
    this.#ws = ws;
    ws.onopen = () => {
      void this.#t.token().then(
        (token) => {
          if (this.#ws !== ws) return;
          if (token) this.#send({ type: 'auth', token });
          for (const s of this.#subs.values()) this.#send({ type: 'subscribe', id: s.id, route: s.route, body: s.body });
        },
        () => ws.close(),
      );
      this.#offToken ??= this.#t.onToken((token) => {
        if (this.#ws?.readyState === OPEN && token) this.#send({ type: 'auth', token });
      });
      this.#heard = Date.now();
      this.#ping = setInterval(() => {
        if (Date.now() - this.#heard > SILENT_MS) ws.close();
        else this.#send({ type: 'ping' });
      }, PING_MS);
      (this.#ping as { unref?: () => void }).unref?.();
    };
    ws.onmessage = (event) => {
      this.#heard = Date.now();
      this.#receive(typeof event.data === 'string' ? event.data : String(event.data));
    };
    ws.onerror = () => undefined; // onclose follows
    ws.onclose = () => {
      if (this.#ws !== ws) return;
      this.#ws = undefined;
      if (this.#ping) clearInterval(this.#ping);
      this.#reconnect();
    };
  }

  /** Exponential backoff with jitter: half the step fixed, half random, so clients spread out after an outage. */
  #reconnect(): void {
    if (this.#subs.size === 0 || this.#retry) return;
    const step = Math.min(BACKOFF_CAP_MS, BACKOFF_FIRST_MS * 2 ** this.#attempt++);
    this.#retry = setTimeout(() => void this.#connect(), step / 2 + Math.random() * (step / 2));
  }

  #receive(text: string): void {
    let m: ServerMessage;
    try {
      m = JSON.parse(text) as ServerMessage;
    } catch {
      return;
    }
    const code = (m.error as { code?: unknown } | undefined)?.code;
    if (m.type === 'error' && m.id === undefined && code === 'INVALID_TOKEN') {
      // The connection's `auth` was refused (expired meanwhile): a refresh sends a new one.
      void this.#t.refresh().catch(() => undefined);
      return;
    }
    const sub = m.id === undefined ? undefined : this.#subs.get(m.id);
    if (m.type === 'data' && sub) {
      this.#attempt = 0; // a payload proves the connection works
      const json = JSON.stringify(m.data);
      if (json === sub.last) return;
      sub.last = json;
      sub.push(m.data);
    } else if (m.type === 'error' && sub) {
      const err = this.#t.error(m.status ?? 0, m);
      if (code === 'INVALID_TOKEN') {
        // An expired token: refresh (the new token reaches the connection as `auth`) and subscribe again.
        void this.#t.refresh().then(
          () => this.#subs.has(sub.id) && this.#send({ type: 'subscribe', id: sub.id, route: sub.route, body: sub.body }),
          () => this.#end(sub, err),
        );
        return;
      }
      this.#end(sub, err);
    }
  }

  #end(sub: Subscription, err: Error): void {
    this.#subs.delete(sub.id);
    sub.fail(err);
    if (this.#subs.size === 0) this.#stop();
  }

  #stop(): void {
    if (this.#retry) clearTimeout(this.#retry);
    if (this.#ping) clearInterval(this.#ping);
    this.#retry = undefined;
    this.#offToken?.();
    this.#offToken = undefined;
    const ws = this.#ws;
    this.#ws = undefined;
    this.#attempt = 0;
    ws?.close(1000);
  }
}

/** One live query on the shared socket as an async iterator; a slow reader gets the latest result only. */
export class SocketStream<T> implements AsyncIterableIterator<T> {
  readonly #socket: LiveSocket;
  readonly #route: Subscription['route'];
  readonly #body: unknown;
  #id: string | undefined;
  #latest: { value: T } | undefined;
  #error: Error | undefined;
  #done = false;
  #wake: (() => void) | undefined;

  constructor(socket: LiveSocket, route: Subscription['route'], body: unknown) {
    this.#socket = socket;
    this.#route = route;
    this.#body = body;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<T, undefined>> {
    if (this.#done && !this.#latest && !this.#error) return { done: true, value: undefined };
    this.#id ??= this.#socket.add(
      this.#route,
      this.#body,
      (value) => {
        this.#latest = { value: value as T };
        this.#wake?.();
      },
      (err) => {
        this.#error = err;
        this.#done = true;
        this.#wake?.();
      },
    );
    for (;;) {
      if (this.#latest) {
        const { value } = this.#latest;
        this.#latest = undefined;
        return { done: false, value };
      }
      if (this.#error) {
        const err = this.#error;
        this.#error = undefined;
        throw err;
      }
      if (this.#done) return { done: true, value: undefined };
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = undefined;
    }
  }

  async return(): Promise<IteratorResult<T, undefined>> {
    this.close();
    return { done: true, value: undefined };
  }

  close(): void {
    if (this.#done && this.#id === undefined) return;
    this.#done = true;
    if (this.#id !== undefined) this.#socket.remove(this.#id);
    this.#wake?.();
  }
}
