/**
 * The attacks of issue #11, one test each, against the conformance project (docs/reference/conventions.md, docs/reference/data.md Bounds,
 * docs/reference/rules-and-hooks.md, auth.md, rate-limits.md): the right status, nothing written, and bounded time or memory where that is the
 * point. Time bounds are generous (the unhardened server took 7 s to 36 s); numbers belong in
 * bench/attacks.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scenarios, type Scenario, type ScenarioContext } from '../helpers/scenario.js';
import type { TestServer } from '../helpers/server.js';
import { openStream } from '../helpers/stream-client.js';
import { count, expectNoLeak, getWithBody, nonReadingGet, postChunked, rssBytes, startFixture, type Fixture } from './support.js';
import { signUp, type Session } from '../helpers/users.js';

const MB = 1024 * 1024;
let f: Fixture;
let s: TestServer;
let alice: Session;
let bob: Session;
const ctx: ScenarioContext = { server: null as unknown as TestServer, who: {}, vars: {} };
/** A count of `tasks` with a large `where`, sent as a GET body (a query string would be too long). */
const countWhere = (name: string, where: unknown, status: number, rest: Partial<Scenario> = {}): Scenario => ({
  name,
  method: 'GET',
  path: '/db/count',
  body: JSON.stringify({ table: 'tasks', where }),
  bodyInQuery: false,
  status,
  ...rest,
});

beforeAll(async () => {
  // A 3 MiB answer cap keeps the payloads of these tests small; trusting loopback as a proxy
  // lets one test speak for IPv6 clients through X-Forwarded-For.
  f = await startFixture({ TABLEBASE_MAX_RESPONSE_BYTES: String(3 * MB), TRUSTED_PROXIES: '127.0.0.1', TABLEBASE_MAX_STREAMS_PER_IP: '1000' });
  s = f.s;
  ctx.server = s;
  [alice, bob] = await Promise.all([signUp(s, 'alice.security@example.com'), signUp(s, 'bob.security@example.com')]);
});
afterAll(async () => {
  await f?.dispose();
});

const ms = async <T>(work: Promise<T>): Promise<[T, number]> => {
  const t = performance.now();
  const v = await work;
  return [v, performance.now() - t];
};

describe('text matching stays cheap (docs/reference/data.md)', () => {
  it('a 256-character contains over 40 texts of 500 KB answers, and /health is not held meanwhile', async () => {
    const payload = 'a'.repeat(500_000);
    for (let i = 0; i < 40; i++) expect((await s.call('POST', '/db', { table: 'big', object: { payload } })).status).toBe(200);
    const pattern = `${'a'.repeat(255)}b`;
    const counting = ms(getWithBody(s, '/db/count', { table: 'big', where: { payload: { contains: pattern } } }));
    const [health, healthMs] = await ms(s.call('GET', '/health'));
    const [r, countMs] = await counting;
    expect(r.status, r.text).toBe(200);
    expect(r.json.data).toBe(0);
    expect(health.status).toBe(200);
    expect(healthMs).toBeLessThan(2000);
    expect(countMs).toBeLessThan(15_000);
    const ends = await s.get('/db/count', { table: 'big', where: { payload: { endsWith: 'a'.repeat(256) } } });
    expect(ends.json.data).toBe(40);
    await s.call('DELETE', '/db/many', { table: 'big', where: {} });
  });

  scenarios('an operand past 256 characters is 400 with a path, before any SQL', ctx, [
    ...['contains', 'startsWith', 'endsWith'].map((op) =>
      countWhere(`${op} of 257 characters`, { title: { [op]: 'x'.repeat(257) } }, 400, { after: async (r) => expect(r.json.error.details[0]!.path).toBe(`/where/title/${op}`) }),
    ),
    { name: 'contains of 256 emoji is within the bound', method: 'GET', path: '/db/count', body: { table: 'tasks', where: { title: { contains: '😀'.repeat(256) } } }, status: 200 },
  ]);
});

describe('where bounds: 400 with a path, never a 500 (docs/reference/data.md)', () => {
  const nested = (levels: number) => {
    let w: unknown = { title: { eq: 'x' } };
    for (let i = 1; i < levels; i++) w = { not: w };
    return w;
  };
  const vals = (n: number, tag = 'v') => Array.from({ length: n }, (_, i) => `${tag}${i}`);

  const refused = (name: string, where: unknown, path: string | undefined) =>
    countWhere(name, where, 400, {
      code: 'BAD_REQUEST',
      after: async (r) => {
        expect(r.json.error.details[0]!.path).toMatch(/^\/where/);
        if (path) expect(r.json.error.details[0]!.path).toBe(path);
        expectNoLeak(r.text);
      },
    });
  scenarios('past a bound → 400', ctx, [
    refused('or of 5,000 empty filters', { or: Array.from({ length: 5000 }, () => ({})) }, '/where/or'),
    refused('1,001 values (an in of 1,000 and one eq)', { title: { in: vals(1000) }, priority: { eq: 1 } }, '/where/priority/eq'),
    refused('40,000 bound values', { or: Array.from({ length: 40 }, (_, k) => ({ title: { in: vals(1000, `${k}-`) } })) }, '/where/or/0/title/in'),
    refused('17 levels of nesting', nested(17), undefined),
    refused('a 60,000-character pattern', { title: { contains: 'x'.repeat(60_000) } }, '/where/title/contains'),
  ]);

  scenarios('at a bound → 200', ctx, [
    countWhere('1,000 values (2 or-items and 998 in-values)', { or: [{ title: { in: vals(499) } }, { ownerId: { in: vals(499) } }] }, 200),
    countWhere('an in of exactly 1,000', { title: { in: vals(1000) } }, 200),
    countWhere('16 levels of nesting', nested(16), 200),
  ]);
});

describe('memory stays bounded', () => {
  it('300 different maximal in-queries grow RSS by less than 300 MB', async () => {
    const before = await rssBytes(f);
    for (let q = 0; q < 300; q++) {
      const vals = (k: number) => Array.from({ length: 499 }, (_, i) => `q${q}-${k}-${i}-${'x'.repeat(20)}`);
      const r = await getWithBody(s, '/db/count', { table: 'tasks', where: { or: [{ title: { in: vals(0) } }, { ownerId: { in: vals(1) } }] } });
      expect(r.status).toBe(200);
    }
    expect((await rssBytes(f)) - before).toBeLessThan(300 * MB);
  });

  it('20 streams that never read, pushed 1 MB payloads, grow RSS by less than 200 MB', async () => {
    const r = await s.call('POST', '/db', { table: 'big', object: { payload: 'p'.repeat(1_000_000) } });
    const id = r.json.data.id;
    const before = await rssBytes(f);
    const q = encodeURIComponent(JSON.stringify({ table: 'big', where: { id: { eq: id } } }));
    const socks = Array.from({ length: 20 }, () => nonReadingGet(s, `/db/stream/list?body=${q}`));
    try {
      await new Promise((res) => setTimeout(res, 300));
      for (let i = 0; i < 6; i++) {
        const u = await s.call('PATCH', '/db', { table: 'big', where: { id: { eq: id } }, updates: [{ column: 'payload', value: String(i).repeat(1_000_000) }] });
        expect(u.status).toBe(200);
        await new Promise((res) => setTimeout(res, 200));
      }
      expect((await rssBytes(f)) - before).toBeLessThan(200 * MB);
    } finally {
      for (const sk of socks) sk.destroy();
      await s.call('DELETE', '/db/many', { table: 'big', where: {} });
    }
  });
});

describe('maxResponseBytes (docs/reference/data.md): 400 RESPONSE_TOO_LARGE instead of a huge answer', () => {
  beforeAll(async () => {
    for (let i = 0; i < 4; i++) await s.call('POST', '/db', { table: 'big', object: { payload: `grow${i}`.padEnd(1_000_000, 'g') } });
  });
  afterAll(async () => {
    await s.call('DELETE', '/db/many', { table: 'big', where: {} });
  });

  it('a list answer past the cap, and its stream, are refused; a smaller limit answers', async () => {
    const r = await s.get('/db/list', { table: 'big', limit: 4 });
    expect(r.status, r.text.slice(0, 200)).toBe(400);
    expect(r.json.error.code).toBe('RESPONSE_TOO_LARGE');
    expect((await s.get('/db/list', { table: 'big', limit: 2 })).status).toBe(200);
    const st = await openStream(s.base, '/db/stream/list', { table: 'big', limit: 4 });
    expect(st.status).toBe(400);
    expect(st.json.error.code).toBe('RESPONSE_TOO_LARGE');
    st.close();
  });

  it('a stream whose payload grows past the cap ends with one RESPONSE_TOO_LARGE error', async () => {
    const st = await openStream(s.base, '/db/stream/list', { table: 'big', where: { payload: { startsWith: 'grow' } }, limit: 10, order_by: [] }, { format: 'ndjson' });
    try {
      expect(st.status).toBe(400); // 4 rows of 1 MB already pass 3 MiB
    } finally {
      st.close();
    }
    const two = await openStream(s.base, '/db/stream/list', { table: 'big', where: { payload: { startsWith: 'grow1' } }, limit: 10 });
    try {
      expect(two.status).toBe(200);
      await two.next();
      for (let i = 0; i < 3; i++) await s.call('POST', '/db', { table: 'big', object: { payload: `grow1-${i}`.padEnd(1_000_000, 'h') } });
      const err = await two.nextWhere((fr) => fr.json.error !== undefined);
      expect(err.json.error.code).toBe('RESPONSE_TOO_LARGE');
      await two.whenEnded();
    } finally {
      two.close();
    }
  });
});

describe('a write never touches a row its caller cannot see (docs/reference/rules-and-hooks.md)', () => {
  it('takeover, update many, delete and delete many of another user’s notes are 403 with nothing written', async () => {
    const n1 = (await s.call('POST', '/db', { table: 'notes', object: { body: 'alice secret 1' } }, alice.auth)).json.data;
    const n2 = (await s.call('POST', '/db', { table: 'notes', object: { body: 'alice secret 2' } }, alice.auth)).json.data;
    const own = (await s.call('POST', '/db', { table: 'notes', object: { body: 'bob note' } }, bob.auth)).json.data;
    const attempts = [
      s.call('PATCH', '/db', { table: 'notes', where: { id: { eq: n1.id } }, updates: [{ column: 'ownerId', value: bob.id }] }, bob.auth),
      s.call('PATCH', '/db/many', { table: 'notes', where: {}, updates: [{ column: 'body', value: 'pwned' }] }, bob.auth),
      s.call('DELETE', '/db', { table: 'notes', where: { id: { eq: n2.id } } }, bob.auth),
      s.call('DELETE', '/db/many', { table: 'notes', where: {} }, bob.auth),
    ];
    for (const r of await Promise.all(attempts)) {
      expect(r.status, r.text).toBe(403);
      expect(r.text).not.toContain('alice secret');
    }
    const mine = await s.get('/db/list', { table: 'notes', where: { ownerId: { eq: alice.id } } }, alice.auth);
    expect(mine.json.data.items.map((n) => [n.body, n.ownerId])).toEqual([
      ['alice secret 1', alice.id],
      ['alice secret 2', alice.id],
    ]);
    const bobs = await s.get('/db', { table: 'notes', where: { id: { eq: own.id } } }, bob.auth);
    expect(bobs.json.data.body).toBe('bob note'); // the update many that matched it wrote nothing either
    const fine = await s.call('PATCH', '/db', { table: 'notes', where: { id: { eq: own.id } }, updates: [{ column: 'body', value: 'edited' }] }, bob.auth);
    expect(fine.status, fine.text).toBe(200);
  });
});

describe('email on auth tables changes only through the confirmed flow (docs/reference/auth.md)', () => {
  it('PATCH /db on users.email is 400 and changes nothing', async () => {
    const r = await s.call('PATCH', '/db', { table: 'users', where: { id: { eq: bob.id } }, updates: [{ column: 'email', value: 'elsewhere@example.com' }] }, bob.auth);
    expect(r.status, r.text).toBe(400);
    expect(r.json.error.details[0]!.path).toBe('/updates/0/column');
    const me = await s.get('/db', { table: 'users', where: { id: { eq: bob.id } } }, bob.auth);
    expect(me.json.data.email).toBe('bob.security@example.com');
  });
});

describe('JSON only as application/json (docs/reference/conventions.md)', () => {
  const postAs = (type: string, title: string, status: number, rest: Partial<Scenario> = {}): Scenario => ({
    name: `as ${type}`,
    method: 'POST',
    path: '/db',
    body: JSON.stringify({ table: 'tasks', object: { title } }),
    headers: { 'content-type': type },
    status,
    ...rest,
  });
  scenarios(
    'POST /db in another type is 415 and writes nothing',
    ctx,
    ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', 'application/json-seq'].map((type) =>
      postAs(type, 'csrf', 415, {
        code: 'UNSUPPORTED_MEDIA_TYPE',
        before: async (c) => {
          c.vars.tasks = String(await count(s, 'tasks'));
        },
        after: async (_r, c) => expect(String(await count(s, 'tasks'))).toBe(c.vars.tasks),
      }),
    ),
  );

  scenarios(
    'POST /db as JSON is accepted',
    ctx,
    ['application/json', 'application/json; charset=utf-8', 'Application/JSON', 'application/merge-patch+json'].map((type) => postAs(type, 'typed', 200)),
  );

  scenarios('auth routes refuse text/plain too', ctx, [
    {
      name: 'sign-in as text/plain',
      method: 'POST',
      path: '/auth/sign-in',
      body: JSON.stringify({ type: 'signIn', table: 'users', email: 'alice.security@example.com', password: 'a long password' }),
      headers: { 'content-type': 'text/plain' },
      status: 415,
    },
  ]);
});

describe('413 is answered, never a reset (docs/reference/conventions.md)', () => {
  it('a chunked body over the limit gets its 413, and the server keeps serving', async () => {
    expect(await postChunked(s, '/db', 4 * MB)).toBe(413);
    expect(await postChunked(s, '/auth/sign-up', 4 * MB)).toBe(413);
    const r = await s.call('POST', '/db', 'x'.repeat(2 * MB), { 'content-type': 'application/json' });
    expect(r.status).toBe(413);
    expect((await s.call('GET', '/health')).status).toBe(200);
  });
});

describe('IPv6 clients are keyed by their /64 (docs/reference/rate-limits.md)', () => {
  it('addresses of one /64 share a rate-limit window; the next /64 has its own', async () => {
    const get = (ip: string) => s.get('/db', { table: 'limited', where: {} }, { 'x-forwarded-for': ip });
    const statuses = [];
    for (const ip of ['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:db8:1:2:aaaa::3', '2001:db8:1:2:ffff:ffff:ffff:ffff']) statuses.push((await get(ip)).status);
    expect(statuses.slice(0, 3)).not.toContain(429);
    expect(statuses[3]).toBe(429);
    expect((await get('2001:db8:1:3::1')).status).not.toBe(429);
  });
});
