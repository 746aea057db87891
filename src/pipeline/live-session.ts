/**
 * One `/db/live` connection's subscriptions (docs/reference/live.md): the messages of the
 * protocol, independent of the socket that carries them (http/live-socket.ts). Each subscribe is
 * the live read of its stream route (live-read.ts): the same rate-limit counter, token, rules,
 * first query, row filter, engine caps and per-change checks. An error ends that subscription
 * only; the connection stays.
 */
import { ApiError, badRequest, toApiError } from '../core/errors.js';
import type { Runtime } from '../core/runtime.js';
import type { LiveEngine, LiveKind, Subscriber } from '../live/index.js';
import { admitLiveRead, openLiveRead, type LiveRead } from './live-read.js';

/** The route names of a subscribe and the stream route each stands for. */
const ROUTE_KIND: Readonly<Record<string, LiveKind>> = { get: 'one', list: 'list', count: 'count' };
const ID = /^[\s\S]{1,64}$/;

export const DEFAULT_MAX_SUBSCRIPTIONS = 200;

export interface LiveSessionOptions {
  readonly rt: Runtime;
  readonly engine: LiveEngine;
  /** The client IP: rate limits and the per-IP cap count against it. */
  readonly ip: string;
  /** The upgrade request's Authorization header, until an `auth` message replaces it. */
  readonly authorization: string | undefined;
  readonly maxSubscriptions: number;
  readonly maxResponseBytes: number;
  /** Sends one JSON text frame. */
  readonly send: (text: string) => void;
  /**
   * Server-wide stream caps when several processes serve (workers; docs/reference/scaling.md),
   * taken exactly as a stream route takes them: a place per subscription, null when full.
   */
  readonly caps?: { acquire(ip: string): Promise<(() => void) | null> } | undefined;
}

interface Subscription {
  readonly id: string;
  /** `{"type":"data","id":"…",` — a data frame is this plus the engine's shared `{"data":…}` minus its `{`. */
  readonly prefix: string;
  /** Set once open: the read's re-authorization (not the read itself, which holds the first payload). */
  reauthorize?: LiveRead['reauthorize'];
  unsubscribe?: () => void;
  /** The token generation it was authorized with. */
  generation: number;
}

export class LiveSession {
  readonly #o: LiveSessionOptions;
  readonly #subs = new Map<string, Subscription>();
  #authorization: string | undefined;
  #generation = 0;
  /** An `auth` message being verified: subscribes wait for it so they use the new token. */
  #authPending: Promise<void> | undefined;
  #closed = false;

  constructor(o: LiveSessionOptions) {
    this.#o = o;
    this.#authorization = o.authorization;
  }

  /** Open and opening subscriptions. */
  get size(): number {
    return this.#subs.size;
  }

  /** One text frame from the client. */
  handle(text: string): void {
    let m: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
      m = parsed as Record<string, unknown>;
    } catch {
      return this.#error(undefined, badRequest('', 'A message must be a JSON object'));
    }
    switch (m.type) {
      case 'ping':
        return this.#o.send('{"type":"pong"}');
      case 'subscribe':
        return this.#subscribe(m);
      case 'unsubscribe':
        if (typeof m.id !== 'string') return this.#error(undefined, badRequest('/id', 'must be a string'));
        return this.#drop(m.id);
      case 'auth':
        if (typeof m.token !== 'string' || m.token.length === 0 || m.token.length > 8192) return this.#error(undefined, badRequest('/token', 'must be a non-empty string'));
        return this.#auth(`Bearer ${m.token}`);
      default:
        return this.#error(undefined, badRequest('/type', 'must be one of auth, subscribe, unsubscribe, ping'));
    }
  }

  /** The socket closed: release everything at once. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const s of this.#subs.values()) s.unsubscribe?.();
    this.#subs.clear();
  }

  #subscribe(m: Record<string, unknown>): void {
    const id = m.id;
    if (typeof id !== 'string' || !ID.test(id)) return this.#error(undefined, badRequest('/id', 'must be a string of 1 to 64 characters'));
    if (this.#subs.has(id)) return this.#error(undefined, badRequest('/id', `subscription "${id}" is already open`));
    const kind = typeof m.route === 'string' ? ROUTE_KIND[m.route] : undefined;
    if (!kind) return this.#error(id, badRequest('/route', 'must be one of get, list, count'));
    const body = m.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return this.#error(id, badRequest('/body', 'must be an object'));
    if (this.#subs.size >= this.#o.maxSubscriptions) return this.#error(id, new ApiError('RATE_LIMITED', `At most ${this.#o.maxSubscriptions} subscriptions per connection`));
    const sub: Subscription = { id, prefix: `{"type":"data","id":${JSON.stringify(id)},`, generation: this.#generation };
    this.#subs.set(id, sub);
    void this.#open(sub, kind, body as Record<string, unknown>).catch((err: unknown) => {
      const e = toApiError(err);
      // As on the stream routes: an unexpected failure is logged server-side, the client sees a generic 500.
      if (e.code === 'INTERNAL') this.#o.rt.log.error({ err: e.cause ?? err, subscription: sub.id }, '/db/live subscribe failed');
      this.#end(sub, e);
    });
  }

  async #open(sub: Subscription, kind: LiveKind, body: Record<string, unknown>): Promise<void> {
    if (this.#authPending) await this.#authPending;
    if (!this.#current(sub)) return;
    sub.generation = this.#generation;
    const o = await admitLiveRead(this.#o.rt, { ip: this.#o.ip, authorization: this.#authorization }, kind, body); // 1–2
    const read = await openLiveRead(this.#o.rt, this.#o.engine, o, this.#o.maxResponseBytes, true); //              2–5
    if (!this.#current(sub)) return; // unsubscribed (or closed) meanwhile: nothing was registered
    const subscriber: Subscriber = {
      initial: read.initial,
      since: read.since,
      check: read.check,
      push: (json) => this.#o.send(sub.prefix + json.slice(1)),
      fail: (err) => this.#end(sub, err),
      end: () => this.#end(sub, new ApiError('UNAVAILABLE', 'The server is shutting down')),
      via: 'socket',
    };
    const release = this.#o.caps ? await this.#o.caps.acquire(this.#o.ip) : undefined;
    if (release === null) throw new ApiError('RATE_LIMITED', 'Too many open streams');
    if (!this.#current(sub)) return release?.();
    try {
      const unsubscribe = this.#o.engine.subscribe(read.query, subscriber, this.#o.ip); // caps: 429 for this id
      sub.unsubscribe = release ? () => (unsubscribe(), release()) : unsubscribe;
    } catch (err) {
      release?.();
      throw err;
    }
    sub.reauthorize = read.reauthorize;
    this.#o.send(`${sub.prefix}"data":${JSON.stringify(read.initial) ?? 'null'}}`);
    // An `auth` that arrived while this one was opening: authorize it with the newer token too.
    if (sub.generation !== this.#generation) await this.#reauthorize(sub);
  }

  #current(sub: Subscription): boolean {
    return !this.#closed && this.#subs.get(sub.id) === sub;
  }

  #auth(authorization: string): void {
    const run = async () => {
      let jwt;
      try {
        jwt = await this.#o.rt.tokens.verify(authorization);
      } catch (err) {
        // The previous token stays in effect; the client learns why the new one was refused.
        return this.#error(undefined, toApiError(err));
      }
      this.#authorization = authorization;
      this.#generation++;
      await Promise.all([...this.#subs.values()].filter((s) => s.reauthorize).map((s) => this.#reauthorize(s, jwt)));
    };
    // Never rejects: a later subscribe awaits it, and nothing may be left unhandled.
    const done = (this.#authPending ?? Promise.resolve()).then(run).catch((err: unknown) => this.#error(undefined, toApiError(err)));
    this.#authPending = done;
    void done.finally(() => {
      if (this.#authPending === done) this.#authPending = undefined;
    });
  }

  async #reauthorize(sub: Subscription, jwt?: Awaited<ReturnType<Runtime['tokens']['verify']>>): Promise<void> {
    if (!sub.reauthorize || !this.#current(sub)) return;
    sub.generation = this.#generation;
    let token = jwt;
    try {
      token ??= await this.#o.rt.tokens.verify(this.#authorization);
    } catch (err) {
      return this.#end(sub, toApiError(err));
    }
    const err = await sub.reauthorize(token ?? null, this.#authorization);
    if (err) this.#end(sub, err);
  }

  /** Ends one subscription with an error frame (a denial, a failed check, a cap). */
  #end(sub: Subscription, err: ApiError): void {
    if (!this.#current(sub)) return;
    this.#subs.delete(sub.id);
    sub.unsubscribe?.();
    this.#error(sub.id, err);
  }

  #drop(id: string): void {
    const sub = this.#subs.get(id);
    if (!sub) return;
    this.#subs.delete(id);
    sub.unsubscribe?.();
  }

  #error(id: string | undefined, err: ApiError): void {
    if (this.#closed) return;
    const { error } = err.toJSON();
    this.#o.send(JSON.stringify(id === undefined ? { type: 'error', status: err.status, error } : { type: 'error', id, status: err.status, error }));
  }
}
