/**
 * The runtime of the generated client. `tablebase gen client` copies this file verbatim into the
 * file it writes, after the project's types, so it must import nothing: it uses only the
 * platform's fetch, AbortController, TextDecoder, Blob and FormData (Node >= 18, browsers,
 * Deno, Bun). Being a real module here, it is type-checked and unit-tested like any other file.
 * Its one import is replaced by a literal when the client is generated.
 */
import { ERROR_STATUS as SERVER_ERROR_STATUS } from '../core/errors.js';
import { LiveSocket, type WebSocketConstructor } from './runtime-live.js';

/** The subset of `fetch` the client calls. */
export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export interface ClientOptions {
  /** The server, e.g. `http://localhost:8080`. */
  baseUrl: string;
  /** An access token, or a function answering the current one. `signIn`/`signUp`/`refresh` replace it. */
  token?: string | null | (() => string | null | undefined | Promise<string | null | undefined>);
  /** Default: the global `fetch`. */
  fetch?: FetchLike;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
  /** Where the session is kept. Default: `localStorage` in a browser, memory elsewhere. */
  store?: AuthStore;
  /** Refresh the access token this many seconds before it expires (default 60). */
  refreshBefore?: number;
  /** `'http'`: one stream request per live query instead of the shared `/db/live` WebSocket. */
  live?: 'socket' | 'http';
  /** The WebSocket class for live queries (default: the global one; in Node 20, pass `ws`). */
  WebSocket?: WebSocketConstructor;
}

export interface ErrorDetail {
  path: string;
  message: string;
}

/**
 * HTTP status of each error code (docs/reference/conventions.md), for errors that arrive inside a 200 stream. In the
 * generated file this line holds the server's catalog as a literal (see generate.ts).
 */
export const ERROR_STATUS: Readonly<Record<string, number>> = { ...SERVER_ERROR_STATUS };

/** Every failed request: the server's `{"error": {code, message, details}}` with the HTTP status. */
export class TablebaseError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: ErrorDetail[] | undefined;

  constructor(status: number, code: string, message: string, details?: ErrorDetail[]) {
    super(message);
    this.name = 'TablebaseError';
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

export function errorFrom(status: number, json: unknown, fallback: string): TablebaseError {
  const e = typeof json === 'object' && json !== null ? (json as { error?: unknown }).error : undefined;
  if (typeof e === 'object' && e !== null && typeof (e as { code?: unknown }).code === 'string') {
    const { code, message, details } = e as { code: string; message?: unknown; details?: unknown };
    return new TablebaseError(status || ERROR_STATUS[code] || 500, code, typeof message === 'string' ? message : code, Array.isArray(details) ? (details as ErrorDetail[]) : undefined);
  }
  return new TablebaseError(status, `HTTP_${status}`, fallback);
}

export async function failure(res: Response): Promise<TablebaseError> {
  const text = await res.text().catch(() => '');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return errorFrom(res.status, json, text.slice(0, 200) || res.statusText || `HTTP ${res.status}`);
}

/** A live query: an async iterator over the stream's payloads. `return()` (or `close()`) aborts the request. */
export interface LiveStream<T> extends AsyncIterableIterator<T> {
  next(): Promise<IteratorResult<T, undefined>>;
  /** Aborts the request; later `next()` calls answer done. */
  return(): Promise<IteratorResult<T, undefined>>;
  close(): void;
}

/** Reads an `application/x-ndjson` stream (docs/reference/live.md): one document per line, empty lines are heartbeats. */
class NdjsonStream<T> implements LiveStream<T> {
  readonly #controller = new AbortController();
  readonly #open: (signal: AbortSignal) => Promise<Response>;
  readonly #decoder = new TextDecoder();
  #reader: Promise<ReadableStreamDefaultReader<Uint8Array>> | undefined;
  #buffer = '';
  #done = false;

  constructor(open: (signal: AbortSignal) => Promise<Response>) {
    this.#open = open;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async #connect(): Promise<ReadableStreamDefaultReader<Uint8Array>> {
    const res = await this.#open(this.#controller.signal);
    if (!res.ok) throw await failure(res);
    if (!res.body) throw new TablebaseError(res.status, 'NO_BODY', 'The stream has no body');
    return res.body.getReader() as ReadableStreamDefaultReader<Uint8Array>;
  }

  async next(): Promise<IteratorResult<T, undefined>> {
    if (this.#done) return { done: true, value: undefined };
    try {
      const reader = await (this.#reader ??= this.#connect());
      for (;;) {
        const nl = this.#buffer.indexOf('\n');
        if (nl >= 0) {
          const line = this.#buffer.slice(0, nl).trim();
          this.#buffer = this.#buffer.slice(nl + 1);
          if (line === '') continue; // heartbeat
          const message = JSON.parse(line) as { data?: T; error?: unknown };
          if (message.error !== undefined) throw errorFrom(0, message, 'The stream failed');
          return { done: false, value: message.data as T };
        }
        const chunk = await reader.read();
        if (chunk.done) {
          this.close();
          return { done: true, value: undefined };
        }
        this.#buffer += this.#decoder.decode(chunk.value, { stream: true });
      }
    } catch (err) {
      const closedByUs = this.#done;
      this.close();
      if (closedByUs) return { done: true, value: undefined };
      throw err;
    }
  }

  async return(): Promise<IteratorResult<T, undefined>> {
    this.close();
    return { done: true, value: undefined };
  }

  close(): void {
    if (this.#done && this.#controller.signal.aborted) return;
    this.#done = true;
    this.#controller.abort();
  }
}

/** What the auth store keeps: the session of the last sign-in, sign-up or refresh. */
export interface StoredSession {
  accessToken: string;
  refreshToken: string | null;
  /** When the access token expires, in milliseconds since the epoch (0: unknown). */
  expiresAt: number;
  user?: unknown;
}

/**
 * Where the client keeps its session (docs/reference/auth.md): memory by default, `localStorage`
 * in a browser so a reload stays signed in, or your own (a cookie, AsyncStorage, a file).
 */
export interface AuthStore {
  get(): StoredSession | null | Promise<StoredSession | null>;
  set(session: StoredSession | null): void | Promise<void>;
}

export function memoryStore(initial: StoredSession | null = null): AuthStore {
  let session = initial;
  return {
    get: () => session,
    set: (s) => void (session = s),
  };
}

/** Kept under `key` in `storage` (default: the browser's localStorage); an unreadable entry counts as none. */
export function localStorageStore(key = 'tablebase.session', storage: Storage = globalThis.localStorage): AuthStore {
  return {
    get: () => {
      try {
        const text = storage.getItem(key);
        return text ? (JSON.parse(text) as StoredSession) : null;
      } catch {
        return null;
      }
    },
    set: (s) => (s ? storage.setItem(key, JSON.stringify(s)) : storage.removeItem(key)),
  };
}

/** The `exp` of a JWT in milliseconds (0 when unreadable): the client never verifies, it only plans refreshes. */
export function jwtExpiry(token: string): number {
  try {
    const claims = JSON.parse(atob(token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))) as { exp?: unknown };
    return typeof claims.exp === 'number' ? claims.exp * 1000 : 0;
  } catch {
    return 0;
  }
}

/** What sign-in, sign-up, refresh and the passwordless routes answer. */
export interface TokenAnswer {
  user?: unknown;
  accessToken: string;
  refreshToken?: string | null;
  expiresIn?: number;
}

/** Sends requests: the token, the JSON conventions of docs/reference/conventions.md, errors as TablebaseError. */
export class Transport {
  readonly #base: string;
  readonly #fetch: FetchLike;
  readonly #headers: Record<string, string>;
  readonly #store: AuthStore;
  readonly #refreshBefore: number;
  readonly #listeners = new Set<(token: string | null) => void>();
  /** A token given in the options or by setToken; it wins over the stored session. */
  #token: ClientOptions['token'];
  #refreshing: Promise<StoredSession> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #live: LiveSocket | undefined;

  constructor(options: ClientOptions) {
    this.#base = options.baseUrl.replace(/\/+$/, '');
    const f = options.fetch ?? (globalThis.fetch as FetchLike | undefined);
    if (!f) throw new Error('No fetch available: pass options.fetch');
    // Called unbound: a browser's fetch throws "Illegal invocation" when called as a method of another object.
    this.#fetch = (input, init) => f(input, init);
    this.#headers = { ...options.headers };
    this.#token = options.token;
    this.#store = options.store ?? (typeof globalThis.localStorage === 'object' && globalThis.localStorage ? localStorageStore() : memoryStore());
    this.#refreshBefore = (options.refreshBefore ?? 60) * 1000;
    const ws = options.live === 'http' ? undefined : (options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket);
    if (ws) {
      const auth = {
        token: () => this.token(),
        refresh: () => this.refresh(),
        onToken: (l: (token: string | null) => void) => this.onToken(l),
        error: (status: number, m: unknown) => errorFrom(status, m, 'The live query failed'),
      };
      this.#live = new LiveSocket(auth, ws, this.#base.replace(/^http/, 'ws') + '/db/live');
    }
    void Promise.resolve(this.#store.get()).then(
      (s) => this.#schedule(s),
      () => undefined,
    );
  }

  /** Replaces the access token sent as `Authorization: Bearer` (null: none; undefined: the stored session's). */
  setToken(token: string | null | undefined): void {
    this.#token = token;
    this.#notify(token ?? null);
  }

  /** The stored session, as the store has it now (another tab may have refreshed it). */
  async session(): Promise<StoredSession | null> {
    return (await this.#store.get()) ?? null;
  }

  /** The access token to send: refreshed first when it expires within `refreshBefore` and a refresh token is known. */
  async token(): Promise<string | null> {
    if (this.#token !== undefined) return (typeof this.#token === 'function' ? await this.#token() : this.#token) ?? null;
    const s = await this.session();
    if (!s) return null;
    const expiresAt = s.expiresAt || jwtExpiry(s.accessToken);
    if (s.refreshToken && expiresAt && Date.now() > expiresAt - this.#refreshBefore) {
      // A failed early refresh leaves the current token, still valid for a while.
      return (await this.refresh().catch(() => s)).accessToken;
    }
    return s.accessToken;
  }

  /** Keeps a session the server answered (sign-in, sign-up, refresh) and tells the live connection. */
  async keep(answer: TokenAnswer): Promise<StoredSession> {
    const s: StoredSession = {
      accessToken: answer.accessToken,
      refreshToken: answer.refreshToken ?? null,
      expiresAt: answer.expiresIn ? Date.now() + answer.expiresIn * 1000 : jwtExpiry(answer.accessToken),
      user: answer.user,
    };
    this.#token = undefined;
    await this.#store.set(s);
    this.#schedule(s);
    this.#notify(s.accessToken);
    return s;
  }

  /** Forgets the session (logout, or a refresh token the server refused). */
  async clear(): Promise<void> {
    this.#token = undefined;
    if (this.#timer) clearTimeout(this.#timer);
    await this.#store.set(null);
    this.#notify(null);
  }

  /** Calls `listener` with every new access token (null: signed out); answers the unsubscribe. */
  onToken(listener: (token: string | null) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #notify(token: string | null): void {
    for (const l of this.#listeners) l(token);
  }

  /** A timer refreshes the token before it expires, so an idle page's live queries stay authorized. */
  #schedule(s: StoredSession | null): void {
    if (this.#timer) clearTimeout(this.#timer);
    if (!s?.refreshToken || !s.expiresAt) return;
    const wait = Math.max(1000, s.expiresAt - this.#refreshBefore - Date.now());
    if (wait > 2 ** 31 - 1) return;
    this.#timer = setTimeout(() => void this.refresh().catch(() => undefined), wait);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  /** Rotates the refresh token (default: the stored one); one request at a time, shared by every caller. */
  refresh(refreshToken?: string): Promise<StoredSession> {
    return (this.#refreshing ??= (async () => {
      try {
        const token = refreshToken ?? (await this.session())?.refreshToken;
        if (!token) throw new TablebaseError(401, 'INVALID_TOKEN', 'No refresh token: sign in first');
        const res = await this.#fetch(this.url('/auth/refresh'), await this.#init('POST', 'application/json', { refreshToken: token }, undefined, null));
        if (!res.ok) {
          const err = await failure(res);
          if (err.status === 401) await this.clear(); // revoked or reused: signed out
          throw err;
        }
        return await this.keep((JSON.parse(await res.text()) as { data: TokenAnswer }).data);
      } finally {
        this.#refreshing = undefined;
      }
    })());
  }

  url(path: string, query?: Record<string, string>): string {
    const q = query ? `?${new URLSearchParams(query).toString()}` : '';
    return `${this.#base}${path}${q}`;
  }

  async #init(method: string, accept: string, body: unknown, signal?: AbortSignal, token?: string | null): Promise<RequestInit> {
    const headers: Record<string, string> = { accept, ...this.#headers };
    const bearer = token === undefined ? await this.token() : token;
    if (bearer) headers.authorization = `Bearer ${bearer}`;
    const init: RequestInit = { method, headers };
    if (signal) init.signal = signal;
    if (body instanceof FormData || body instanceof Blob) init.body = body;
    else if (body !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    return init;
  }

  /**
   * fetch with the bearer token; a 401 INVALID_TOKEN (expired, revoked) is answered once by a
   * refresh and the same request again, when the token came from the stored session.
   */
  async #send(method: string, url: string, accept: string, body: unknown, signal?: AbortSignal): Promise<Response> {
    const init = await this.#init(method, accept, body, signal);
    const res = await this.#fetch(url, init);
    if (res.status !== 401 || this.#token !== undefined || !(init.headers as Record<string, string>).authorization) return res;
    if ((await failure(res.clone())).code !== 'INVALID_TOKEN' || !(await this.session())?.refreshToken) return res;
    try {
      await this.refresh();
    } catch {
      return res;
    }
    return this.#fetch(url, await this.#init(method, accept, body, signal));
  }

  /** GET routes carry their JSON in `?body=` (docs/reference/conventions.md). */
  #path(method: string, path: string, body: unknown): string {
    return method === 'GET' && body !== undefined ? this.url(path, { body: JSON.stringify(body) }) : this.url(path);
  }

  /** Sends a request and answers the `data` of the envelope (undefined for 204 and empty 200s). */
  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.#send(method, this.#path(method, path, body), 'application/json', method === 'GET' ? undefined : body);
    if (!res.ok) throw await failure(res);
    const text = await res.text();
    if (!text) return undefined as T;
    return (JSON.parse(text) as { data: T }).data;
  }

  /** Raw bytes (photos). */
  async blob(path: string, query?: Record<string, string>): Promise<Blob> {
    const res = await this.#send('GET', this.url(path, query), '*/*', undefined);
    if (!res.ok) throw await failure(res);
    return res.blob();
  }

  /**
   * A live query: over the shared `/db/live` WebSocket when one is available (docs/reference/live.md),
   * else its stream route with `Accept: application/x-ndjson`. It starts on the first `next()`.
   */
  stream<T>(path: string, body: unknown): LiveStream<T> {
    const route = LIVE_ROUTES[path];
    if (this.#live && route) return this.#live.subscribe<T>(route, body);
    return new NdjsonStream<T>((signal) => this.#send('GET', this.#path('GET', path, body), 'application/x-ndjson', undefined, signal));
  }
}

/** The stream routes and their `/db/live` subscribe routes. */
const LIVE_ROUTES: Readonly<Record<string, 'get' | 'list' | 'count'>> = { '/db/stream': 'get', '/db/stream/list': 'list', '/db/stream/count': 'count' };

export interface Page<R> {
  items: R[];
  /** Every matching row, ignoring limit and offset. */
  total: number;
}

export interface CollectionShape {
  row: object;
  where: object;
  orderBy: object;
}

export interface TableShape extends CollectionShape {
  create: object;
  update: object;
  custom: string;
}

export interface ListOptions<S extends CollectionShape> {
  where?: S['where'];
  /** Default 100, at most 1000. */
  limit?: number;
  offset?: number;
  /** Absent: the default order; `[]`: no ordering. */
  order_by?: S['orderBy'][];
}

export interface CustomOptions<S extends TableShape> {
  where: S['where'];
  updates?: S['update'][];
  /** `/db/custom/{name}/many` instead of the single-row form. */
  many?: boolean;
  limit?: number;
}

/** Reads: tables and views. */
export interface ViewClient<S extends CollectionShape> {
  get(where: S['where']): Promise<S['row']>;
  list(options?: ListOptions<S>): Promise<Page<S['row']>>;
  count(where?: S['where']): Promise<number>;
  stream(where: S['where']): LiveStream<S['row'] | null>;
  streamList(options?: ListOptions<S>): LiveStream<Page<S['row']>>;
  streamCount(where?: S['where']): LiveStream<number>;
}

export interface TableClient<S extends TableShape> extends ViewClient<S> {
  create(object: S['create']): Promise<S['row']>;
  createMany(objects: S['create'][]): Promise<S['row'][]>;
  update(where: S['where'], updates: S['update'][]): Promise<S['row']>;
  updateMany(where: S['where'], updates: S['update'][], options?: { limit?: number }): Promise<S['row'][]>;
  delete(where: S['where']): Promise<void>;
  deleteMany(where: S['where'], options?: { limit?: number }): Promise<void>;
  custom<R = unknown>(name: S['custom'], options: CustomOptions<S>): Promise<R>;
}

const withLimit = (body: Record<string, unknown>, limit: number | undefined) => (limit === undefined ? body : { ...body, limit });

/** The shape of a table the client knows nothing about; generated clients narrow it per table. */
export interface UntypedShape extends TableShape {
  row: Record<string, unknown>;
  where: Record<string, unknown>;
  orderBy: { column: string; direction?: 'asc' | 'desc' };
  create: Record<string, unknown>;
  update: { column: string; value: unknown };
}

export function collectionClient(t: Transport, table: string): TableClient<UntypedShape> {
  const listBody = (o: ListOptions<UntypedShape> = {}) => ({ table, ...o });
  return {
    get: (where) => t.request('GET', '/db', { table, where }),
    list: (options) => t.request('GET', '/db/list', listBody(options)),
    count: (where) => t.request('GET', '/db/count', where === undefined ? { table } : { table, where }),
    stream: (where) => t.stream('/db/stream', { table, where }),
    streamList: (options) => t.stream('/db/stream/list', listBody(options)),
    streamCount: (where) => t.stream('/db/stream/count', where === undefined ? { table } : { table, where }),
    create: (object) => t.request('POST', '/db', { table, object }),
    createMany: (objects) => t.request('POST', '/db/many', { table, objects }),
    update: (where, updates) => t.request('PATCH', '/db', { table, where, updates }),
    updateMany: (where, updates, options) => t.request('PATCH', '/db/many', withLimit({ table, where, updates }, options?.limit)),
    delete: (where) => t.request('DELETE', '/db', { table, where }),
    deleteMany: (where, options) => t.request('DELETE', '/db/many', withLimit({ table, where }, options?.limit)),
    custom: (name, o) => {
      const body: Record<string, unknown> = withLimit({ table, where: o.where }, o.limit);
      if (o.updates !== undefined) body.updates = o.updates;
      return t.request('PATCH', `/db/custom/${encodeURIComponent(name)}${o.many ? '/many' : ''}`, body);
    },
  };
}
