/**
 * The generated client's runtime against a scripted fetch: the JSON conventions of docs/reference/conventions.md, the
 * error type, and NDJSON streams (docs/reference/live.md) as async iterators that abort on return().
 */
import { describe, expect, it } from 'vitest';
import { ERROR_STATUS as SERVER_STATUS } from '../core/errors.js';
import { authClient, baseClient } from './runtime-services.js';
import { collectionClient, ERROR_STATUS, TablebaseError, Transport, type FetchLike } from './runtime.js';

interface Call {
  url: string;
  init: RequestInit;
}

function scripted(answer: (call: Call) => Response | Promise<Response>): { fetch: FetchLike; calls: Call[] } {
  const calls: Call[] = [];
  return {
    calls,
    fetch: async (url, init = {}) => {
      const call = { url, init };
      calls.push(call);
      return answer(call);
    },
  };
}

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/** A stream response the test feeds line by line; it errors when the request is aborted, like fetch. */
function feed(signal: AbortSignal | null | undefined) {
  let ctrl!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (ctrl = c) });
  signal?.addEventListener('abort', () => ctrl.error(new DOMException('aborted', 'AbortError')));
  const enc = new TextEncoder();
  return { response: new Response(body, { status: 200, headers: { 'content-type': 'application/x-ndjson' } }), push: (s: string) => ctrl.enqueue(enc.encode(s)), end: () => ctrl.close() };
}

describe('requests', () => {
  it('GET routes put the body in ?body=, writes send JSON, both send the bearer token', async () => {
    const s = scripted(() => json(200, { data: { id: 'tk_1' } }));
    const t = new Transport({ baseUrl: 'http://h:1/', fetch: s.fetch, token: 'tok' });
    const tasks = collectionClient(t, 'tasks');
    await tasks.get({ id: { eq: 'tk_1' } });
    await tasks.create({ title: 'a' });
    const u = new URL(s.calls[0]!.url);
    expect(u.pathname).toBe('/db');
    expect(JSON.parse(u.searchParams.get('body')!)).toEqual({ table: 'tasks', where: { id: { eq: 'tk_1' } } });
    expect(s.calls[0]!.init.body).toBeUndefined();
    expect(s.calls[1]!.init.method).toBe('POST');
    expect(JSON.parse(String(s.calls[1]!.init.body))).toEqual({ table: 'tasks', object: { title: 'a' } });
    for (const c of s.calls) expect((c.init.headers as Record<string, string>).authorization).toBe('Bearer tok');
  });

  it('answers the envelope data, undefined for 204, and sends limits and custom names', async () => {
    const s = scripted((c) => (c.init.method === 'DELETE' ? new Response(null, { status: 204 }) : json(200, { data: [1, 2] })));
    const tasks = collectionClient(new Transport({ baseUrl: 'http://h', fetch: s.fetch }), 'tasks');
    expect(await tasks.updateMany({}, [{ column: 'n', value: 1 }], { limit: 2 })).toEqual([1, 2]);
    expect(await tasks.deleteMany({})).toBeUndefined();
    await tasks.custom('complete', { where: {}, many: true });
    expect(JSON.parse(String(s.calls[0]!.init.body)).limit).toBe(2);
    expect(s.calls[2]!.url).toBe('http://h/db/custom/complete/many');
    expect((s.calls[0]!.init.headers as Record<string, string>).authorization).toBeUndefined();
  });

  it('throws TablebaseError with status, code, message and details', async () => {
    const details = [{ path: '/object/nope', message: 'unknown column "nope"' }];
    const s = scripted(() => json(400, { error: { code: 'BAD_REQUEST', message: 'bad', details } }));
    const err = await collectionClient(new Transport({ baseUrl: 'http://h', fetch: s.fetch }), 't')
      .create({})
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TablebaseError);
    expect(err).toMatchObject({ status: 400, code: 'BAD_REQUEST', message: 'bad', details });
  });

  it('a non-JSON failure still becomes a TablebaseError', async () => {
    const s = scripted(() => new Response('<html>bad gateway</html>', { status: 502 }));
    await expect(baseClient(new Transport({ baseUrl: 'http://h', fetch: s.fetch })).health()).rejects.toMatchObject({ status: 502, code: 'HTTP_502' });
  });

  it('auth keeps the tokens of sign-in, sends them, and forgets them on logout', async () => {
    const s = scripted((c) =>
      c.url.endsWith('/auth/logout') ? new Response(null, { status: 204 }) : json(200, { data: { user: { id: 'us_1' }, accessToken: 'A1', refreshToken: 'R1', expiresIn: 3600 } }),
    );
    const t = new Transport({ baseUrl: 'http://h', fetch: s.fetch });
    const auth = authClient<{ users: { row: { id: string }; signUp: object } }>(t);
    const session = await auth.signIn({ table: 'users', email: 'a@b.co', password: 'pw-pw-pw-pw' });
    expect(session.user.id).toBe('us_1');
    expect(JSON.parse(String(s.calls[0]!.init.body))).toMatchObject({ type: 'signIn', table: 'users' });
    expect(await t.token()).toBe('A1');
    await auth.refresh();
    expect(JSON.parse(String(s.calls[1]!.init.body))).toEqual({ refreshToken: 'R1' });
    await auth.logout();
    expect((s.calls[2]!.init.headers as Record<string, string>).authorization).toBe('Bearer A1');
    expect(await t.token()).toBeNull();
  });

  it('its status table is the server catalog', () => {
    expect(ERROR_STATUS).toEqual(SERVER_STATUS);
  });
});

describe('streams', () => {
  it('yields each NDJSON payload, skips heartbeats and joins lines split across chunks', async () => {
    let f!: ReturnType<typeof feed>;
    const s = scripted((c) => (f = feed(c.init.signal)).response);
    const stream = collectionClient(new Transport({ baseUrl: 'http://h', fetch: s.fetch }), 'tasks').streamList({ limit: 5 });
    const first = stream.next();
    await new Promise((r) => setTimeout(r, 0));
    f.push('{"data":{"items":[],"total":0}}\n\n');
    expect(await first).toEqual({ done: false, value: { items: [], total: 0 } });
    f.push('\n{"data":{"items":[{"id":"tk_1"}],');
    const second = stream.next();
    f.push('"total":1}}\n');
    expect((await second).value).toEqual({ items: [{ id: 'tk_1' }], total: 1 });
    f.end();
    expect(await stream.next()).toEqual({ done: true, value: undefined });
    expect((s.calls[0]!.init.headers as Record<string, string>).accept).toBe('application/x-ndjson');
    expect(JSON.parse(new URL(s.calls[0]!.url).searchParams.get('body')!)).toEqual({ table: 'tasks', limit: 5 });
  });

  it('return() aborts the request, even while a read is pending', async () => {
    let f!: ReturnType<typeof feed>;
    const s = scripted((c) => (f = feed(c.init.signal)).response);
    const stream = collectionClient(new Transport({ baseUrl: 'http://h', fetch: s.fetch }), 'tasks').streamCount();
    const pending = stream.next();
    await new Promise((r) => setTimeout(r, 0));
    await stream.return();
    expect(s.calls[0]!.init.signal!.aborted).toBe(true);
    expect(await pending).toEqual({ done: true, value: undefined });
    expect(await stream.next()).toEqual({ done: true, value: undefined });
    expect(f).toBeDefined();
  });

  it('for-await with break closes the stream', async () => {
    const s = scripted((c) => {
      const f = feed(c.init.signal);
      f.push('{"data":1}\n{"data":2}\n');
      return f.response;
    });
    const seen: number[] = [];
    for await (const n of collectionClient(new Transport({ baseUrl: 'http://h', fetch: s.fetch }), 't').streamCount()) {
      seen.push(n as number);
      break;
    }
    expect(seen).toEqual([1]);
    expect(s.calls[0]!.init.signal!.aborted).toBe(true);
  });

  it("an error payload throws a TablebaseError with the code's status; a refused connect throws the JSON error", async () => {
    const s = scripted((c) => {
      if (c.url.includes('count')) return json(403, { error: { code: 'FORBIDDEN', message: 'Forbidden' } });
      const f = feed(c.init.signal);
      f.push('{"error":{"code":"INVALID_TOKEN","message":"expired"}}\n');
      return f.response;
    });
    const tasks = collectionClient(new Transport({ baseUrl: 'http://h', fetch: s.fetch }), 'tasks');
    const one = tasks.stream({});
    await expect(one.next()).rejects.toMatchObject({ status: 401, code: 'INVALID_TOKEN', message: 'expired' });
    expect(await one.next()).toEqual({ done: true, value: undefined });
    await expect(tasks.streamCount().next()).rejects.toMatchObject({ status: 403, code: 'FORBIDDEN' });
  });
});
