/**
 * The client's session and live-connection logic against fakes: a scripted fetch and an
 * in-memory WebSocket (the real server is in test/client-browser.test.ts). One connection for
 * every live query, auth before subscribes, reconnect with growing jittered delays and
 * resubscribe, a refreshed token sent to the open connection, refresh once on 401 INVALID_TOKEN.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createClient } from './index.js';
import type { WebSocketLike } from './runtime-live.js';
import { memoryStore, type FetchLike } from './runtime.js';

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/** A token whose `exp` is `inSeconds` from now (the client reads exp, never verifies). */
const jwt = (name: string, inSeconds: number) => `h.${btoa(JSON.stringify({ sub: name, exp: Math.floor(Date.now() / 1000) + inSeconds })).replace(/=+$/, '')}.s`;

class FakeSocket implements WebSocketLike {
  static all: FakeSocket[] = [];
  readyState = 0;
  sent: Record<string, unknown>[] = [];
  onopen: ((e: unknown) => void) | null = null;
  onmessage: ((e: { data: unknown }) => void) | null = null;
  onclose: ((e: unknown) => void) | null = null;
  onerror: ((e: unknown) => void) | null = null;
  constructor(
    readonly url: string,
    readonly protocol?: string | string[],
  ) {
    FakeSocket.all.push(this);
  }
  send(data: string): void {
    this.sent.push(JSON.parse(data) as Record<string, unknown>);
  }
  close(): void {
    if (this.readyState === 3) return;
    this.readyState = 3;
    this.onclose?.({});
  }
  open(): void {
    this.readyState = 1;
    this.onopen?.({});
  }
  receive(m: object): void {
    this.onmessage?.({ data: JSON.stringify(m) });
  }
}

const settle = () => new Promise((r) => setTimeout(r, 0));

afterEach(() => {
  FakeSocket.all = [];
  vi.useRealTimers();
});

describe('live queries over one /db/live connection', () => {
  it('shares one socket, sends auth then subscribes, delivers data, drops identical payloads, unsubscribes on return', async () => {
    const client = createClient({ baseUrl: 'http://h:1', fetch: async () => json(500, {}), WebSocket: FakeSocket, store: memoryStore({ accessToken: 'A1', refreshToken: null, expiresAt: 0 }) });
    const list = client.table('tasks').streamList({ limit: 5 });
    const count = client.table('tasks').streamCount();
    const first = list.next();
    const firstCount = count.next();
    expect(FakeSocket.all).toHaveLength(1);
    const ws = FakeSocket.all[0]!;
    expect([ws.url, ws.protocol]).toEqual(['ws://h:1/db/live', 'tablebase.v1']);
    ws.open();
    await settle();
    expect(ws.sent).toEqual([
      { type: 'auth', token: 'A1' },
      { type: 'subscribe', id: 'q1', route: 'list', body: { table: 'tasks', limit: 5 } },
      { type: 'subscribe', id: 'q2', route: 'count', body: { table: 'tasks' } },
    ]);
    ws.receive({ type: 'data', id: 'q1', data: { items: [], total: 0 } });
    ws.receive({ type: 'data', id: 'q2', data: 0 });
    expect(await first).toEqual({ done: false, value: { items: [], total: 0 } });
    expect(await firstCount).toEqual({ done: false, value: 0 });
    ws.receive({ type: 'data', id: 'q2', data: 0 }); // identical: not delivered
    ws.receive({ type: 'data', id: 'q2', data: 1 });
    expect(await count.next()).toEqual({ done: false, value: 1 });
    await list.return();
    expect(ws.sent.at(-1)).toEqual({ type: 'unsubscribe', id: 'q1' });
    await count.return();
    expect(ws.readyState).toBe(3); // the last one closes the socket
  });

  it('a subscription error ends that query only, with the status and code', async () => {
    const client = createClient({ baseUrl: 'http://h', fetch: async () => json(500, {}), WebSocket: FakeSocket, store: memoryStore() });
    const a = client.table('a').streamCount();
    const b = client.table('b').streamCount();
    const pa = a.next();
    const pb = b.next();
    FakeSocket.all[0]!.open();
    await settle();
    FakeSocket.all[0]!.receive({ type: 'error', id: 'q1', status: 403, error: { code: 'FORBIDDEN', message: 'no' } });
    await expect(pa).rejects.toMatchObject({ status: 403, code: 'FORBIDDEN' });
    FakeSocket.all[0]!.receive({ type: 'data', id: 'q2', data: 3 });
    expect(await pb).toEqual({ done: false, value: 3 });
    expect(FakeSocket.all[0]!.readyState).toBe(1);
    await b.return();
  });

  it('reconnects with growing, jittered delays (capped), resubscribes and delivers the current result', async () => {
    vi.useFakeTimers();
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const client = createClient({ baseUrl: 'http://h', fetch: async () => json(500, {}), WebSocket: FakeSocket, store: memoryStore() });
    const s = client.table('t').streamCount();
    const p = s.next();
    FakeSocket.all[0]!.open();
    await vi.advanceTimersByTimeAsync(0);
    FakeSocket.all[0]!.receive({ type: 'data', id: 'q1', data: 1 });
    expect(await p).toEqual({ done: false, value: 1 });
    const delays: number[] = [];
    for (let i = 0; i < 8; i++) {
      const before = FakeSocket.all.length;
      FakeSocket.all.at(-1)!.close(); // dropped, and every retry fails before opening
      let waited = 0;
      while (FakeSocket.all.length === before) {
        await vi.advanceTimersByTimeAsync(50);
        waited += 50;
      }
      delays.push(waited);
    }
    // 500 ms doubling to the 30 s cap; with random() = 0.5 each wait is 3/4 of its step.
    expect(delays).toEqual([400, 750, 1500, 3000, 6000, 12000, 22500, 22500]);
    const ws = FakeSocket.all.at(-1)!;
    ws.open();
    await vi.advanceTimersByTimeAsync(0);
    expect(ws.sent).toEqual([{ type: 'subscribe', id: 'q1', route: 'count', body: { table: 't' } }]);
    const next = s.next();
    ws.receive({ type: 'data', id: 'q1', data: 2 }); // changed while away: delivered
    expect(await next).toEqual({ done: false, value: 2 });
    await s.return();
  });

  it('sends a refreshed token to the open connection, and refreshes when a subscription says INVALID_TOKEN', async () => {
    let n = 0;
    const fetch: FetchLike = async (url) => (url.endsWith('/auth/refresh') ? json(200, { data: { accessToken: `A${++n + 1}`, refreshToken: `R${n + 1}`, expiresIn: 3600 } }) : json(500, {}));
    const client = createClient({ baseUrl: 'http://h', fetch, WebSocket: FakeSocket, store: memoryStore({ accessToken: 'A1', refreshToken: 'R1', expiresAt: Date.now() + 3_600_000 }) });
    const s = client.table('t').streamCount();
    void s.next();
    const ws = FakeSocket.all[0]!;
    ws.open();
    await settle();
    ws.receive({ type: 'error', id: 'q1', status: 401, error: { code: 'INVALID_TOKEN', message: 'expired' } });
    await vi.waitFor(() =>
      expect(ws.sent.slice(2)).toEqual([
        { type: 'auth', token: 'A2' },
        { type: 'subscribe', id: 'q1', route: 'count', body: { table: 't' } },
      ]),
    );
    await client.auth.refresh();
    expect(ws.sent.at(-1)).toEqual({ type: 'auth', token: 'A3' });
    await s.return();
  });
});

describe('the session', () => {
  it('a 401 INVALID_TOKEN is answered by one refresh and the same request again', async () => {
    const calls: string[] = [];
    const fetch: FetchLike = async (url, init) => {
      const auth = (init?.headers as Record<string, string>).authorization ?? '';
      calls.push(`${url.replace('http://h', '')} ${auth}`);
      if (url.endsWith('/auth/refresh')) return json(200, { data: { accessToken: 'A2', refreshToken: 'R2', expiresIn: 3600 } });
      return auth === 'Bearer A2' ? json(200, { data: 7 }) : json(401, { error: { code: 'INVALID_TOKEN', message: 'expired' } });
    };
    const store = memoryStore({ accessToken: 'A1', refreshToken: 'R1', expiresAt: Date.now() + 3_600_000 });
    const client = createClient({ baseUrl: 'http://h', fetch, store, live: 'http' });
    expect(await client.table('t').count()).toBe(7);
    expect(calls.map((c) => c.replace(/\?.*? /, ' '))).toEqual(['/db/count Bearer A1', '/auth/refresh ', '/db/count Bearer A2']);
    expect(await store.get()).toMatchObject({ accessToken: 'A2', refreshToken: 'R2' });
  });

  it('refreshes before the request when the stored token expires within refreshBefore; a refused refresh signs out', async () => {
    let refreshOk = true;
    const fetch: FetchLike = async (url) =>
      url.endsWith('/auth/refresh')
        ? refreshOk
          ? json(200, { data: { accessToken: jwt('b', 3600), refreshToken: 'R2' } })
          : json(401, { error: { code: 'INVALID_TOKEN', message: 'reused' } })
        : json(200, { data: 1 });
    const store = memoryStore({ accessToken: jwt('a', 30), refreshToken: 'R1', expiresAt: 0 }); // exp read from the JWT
    const client = createClient({ baseUrl: 'http://h', fetch, store, live: 'http' });
    await client.table('t').count();
    expect((await store.get())?.refreshToken).toBe('R2');
    expect((await store.get())?.expiresAt).toBeGreaterThan(Date.now() + 3_000_000);
    refreshOk = false;
    await expect(client.auth.refresh()).rejects.toMatchObject({ status: 401 });
    expect(await store.get()).toBeNull();
  });
});
