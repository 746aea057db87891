/**
 * The runtime of the generated client. `tablebase gen client` copies this file verbatim into the
 * file it writes, after the project's types, so it must import nothing: it uses only the
 * platform's fetch, AbortController, TextDecoder, Blob and FormData (Node >= 18, browsers,
 * Deno, Bun). Being a real module here, it is type-checked and unit-tested like any other file.
 * Its one import is replaced by a literal when the client is generated.
 */
import { ERROR_STATUS as SERVER_ERROR_STATUS } from '../core/errors.js';

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
}

export interface ErrorDetail {
  path: string;
  message: string;
}

/**
 * HTTP status of each error code (SPEC §2), for errors that arrive inside a 200 stream. In the
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

function errorFrom(status: number, json: unknown, fallback: string): TablebaseError {
  const e = typeof json === 'object' && json !== null ? (json as { error?: unknown }).error : undefined;
  if (typeof e === 'object' && e !== null && typeof (e as { code?: unknown }).code === 'string') {
    const { code, message, details } = e as { code: string; message?: unknown; details?: unknown };
    return new TablebaseError(status || ERROR_STATUS[code] || 500, code, typeof message === 'string' ? message : code, Array.isArray(details) ? (details as ErrorDetail[]) : undefined);
  }
  return new TablebaseError(status, `HTTP_${status}`, fallback);
}

async function failure(res: Response): Promise<TablebaseError> {
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

/** Reads an `application/x-ndjson` stream (SPEC §7): one document per line, empty lines are heartbeats. */
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

/** Sends requests: the token, the JSON conventions of SPEC §2, errors as TablebaseError. */
export class Transport {
  readonly #base: string;
  readonly #fetch: FetchLike;
  readonly #headers: Record<string, string>;
  #token: ClientOptions['token'];
  /** The last refresh token the server handed out (sign-in, sign-up, refresh). */
  refreshToken: string | null = null;

  constructor(options: ClientOptions) {
    this.#base = options.baseUrl.replace(/\/+$/, '');
    const f = options.fetch ?? (globalThis.fetch as FetchLike | undefined);
    if (!f) throw new Error('No fetch available: pass options.fetch');
    this.#fetch = f;
    this.#headers = { ...options.headers };
    this.#token = options.token;
  }

  setToken(token: string | null): void {
    this.#token = token;
  }

  async token(): Promise<string | null> {
    const t = typeof this.#token === 'function' ? await this.#token() : this.#token;
    return t ?? null;
  }

  url(path: string, query?: Record<string, string>): string {
    const q = query ? `?${new URLSearchParams(query).toString()}` : '';
    return `${this.#base}${path}${q}`;
  }

  async #init(method: string, accept: string, body: unknown, signal?: AbortSignal): Promise<RequestInit> {
    const headers: Record<string, string> = { accept, ...this.#headers };
    const token = await this.token();
    if (token) headers.authorization = `Bearer ${token}`;
    const init: RequestInit = { method, headers };
    if (signal) init.signal = signal;
    if (body instanceof FormData || body instanceof Blob) init.body = body;
    else if (body !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    return init;
  }

  /** GET routes carry their JSON in `?body=` (SPEC §2). */
  #path(method: string, path: string, body: unknown): string {
    return method === 'GET' && body !== undefined ? this.url(path, { body: JSON.stringify(body) }) : this.url(path);
  }

  /** Sends a request and answers the `data` of the envelope (undefined for 204 and empty 200s). */
  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const init = await this.#init(method, 'application/json', method === 'GET' ? undefined : body);
    const res = await this.#fetch(this.#path(method, path, body), init);
    if (!res.ok) throw await failure(res);
    const text = await res.text();
    if (!text) return undefined as T;
    return (JSON.parse(text) as { data: T }).data;
  }

  /** Raw bytes (photos). */
  async blob(path: string, query?: Record<string, string>): Promise<Blob> {
    const res = await this.#fetch(this.url(path, query), await this.#init('GET', '*/*', undefined));
    if (!res.ok) throw await failure(res);
    return res.blob();
  }

  /** Opens a stream route with `Accept: application/x-ndjson`; the request starts on the first `next()`. */
  stream<T>(path: string, body: unknown): LiveStream<T> {
    return new NdjsonStream<T>(async (signal) => this.#fetch(this.#path('GET', path, body), await this.#init('GET', 'application/x-ndjson', undefined, signal)));
  }
}

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
