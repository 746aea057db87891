/**
 * A small `/db/live` client for the protocol tests (docs/reference/live.md): opens the socket
 * with the `tablebase.v1` subprotocol, keeps every message, and waits for the ones a test names.
 */
import WebSocket from 'ws';
import { afterEach } from 'vitest';

export interface LiveMessage {
  type: 'data' | 'error' | 'pong';
  id?: string;
  data?: unknown;
  status?: number;
  error?: { code: string; message: string; details?: { path: string; message: string }[] };
}

export interface LiveClient {
  readonly ws: WebSocket;
  /** The headers of the server's 101 answer. */
  readonly upgradeHeaders: Record<string, string | string[] | undefined>;
  readonly messages: LiveMessage[];
  send(message: unknown): void;
  subscribe(id: string, route: 'get' | 'list' | 'count', body: unknown): void;
  /** Resolves with the first message (from `from` on) matching `match`; rejects after `ms`. */
  next(match: (m: LiveMessage) => boolean, ms?: number, from?: number): Promise<LiveMessage>;
  /** The next message for subscription `id` after those already seen. */
  nextFor(id: string, ms?: number): Promise<LiveMessage>;
  /** Resolves with the close code once the socket closed. */
  closed(ms?: number): Promise<number>;
  close(): void;
}

export async function openLive(base: string, options: { headers?: Record<string, string>; origin?: string; insecure?: boolean; protocol?: string } = {}): Promise<LiveClient> {
  const url = `${base.replace(/^http/, 'ws')}/db/live`;
  const ws = new WebSocket(url, options.protocol ?? 'tablebase.v1', { headers: options.headers ?? {}, ...(options.origin ? { origin: options.origin } : {}), rejectUnauthorized: !options.insecure });
  const messages: LiveMessage[] = [];
  const waiters = new Set<() => void>();
  const seen = new Map<string, number>();
  let code: number | undefined;
  let upgradeHeaders: LiveClient['upgradeHeaders'] = {};
  ws.once('upgrade', (res) => (upgradeHeaders = res.headers));
  ws.on('message', (raw) => {
    messages.push(JSON.parse(String(raw)) as LiveMessage);
    for (const w of [...waiters]) w();
  });
  ws.on('close', (c) => {
    code = c;
    for (const w of [...waiters]) w();
  });
  ws.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    ws.once('error', reject);
  });
  const wait = <T>(check: () => T | undefined, ms: number, what: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const run = () => {
        const v = check();
        if (v === undefined) return;
        waiters.delete(run);
        clearTimeout(timer);
        resolve(v);
      };
      const timer = setTimeout(() => {
        waiters.delete(run);
        reject(new Error(`timed out waiting for ${what}; got ${JSON.stringify(messages.slice(-5))}`));
      }, ms);
      waiters.add(run);
      run();
    });
  const client: LiveClient = {
    ws,
    upgradeHeaders,
    messages,
    send: (m) => ws.send(typeof m === 'string' ? m : JSON.stringify(m)),
    subscribe: (id, route, body) => client.send({ type: 'subscribe', id, route, body }),
    next: (match, ms = 10_000, from = 0) => wait(() => messages.slice(from).find(match), ms, 'a message'),
    async nextFor(id, ms = 10_000) {
      const from = seen.get(id) ?? 0;
      const m = await wait(
        () => {
          const i = messages.findIndex((x, n) => n >= from && x.id === id);
          return i < 0 ? undefined : i;
        },
        ms,
        `a message for ${id}`,
      );
      seen.set(id, m + 1);
      return messages[m]!;
    },
    closed: (ms = 10_000) => wait(() => code, ms, 'the close'),
    close: () => ws.terminate(),
  };
  return client;
}

/**
 * `live(headers?)` opens a `/db/live` connection to the server `base()` names; every connection a
 * test opened is closed after it, pass or fail.
 */
export function liveSockets(base: () => string): (headers?: Record<string, string>) => Promise<LiveClient> {
  const open: LiveClient[] = [];
  afterEach(() => {
    for (const c of open.splice(0)) c.close();
  });
  return async (headers) => {
    const c = await openLive(base(), { headers });
    open.push(c);
    return c;
  };
}
