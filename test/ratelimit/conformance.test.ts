/**
 * End-to-end: rate limiting at step 1 of the pipeline (SPEC §9, §13.1, §13.11) against real
 * servers. Counters are keyed by client IP × table × operation, so every test speaks from its own
 * loopback address (127.0.0.0/8 is all loopback on Linux; the client binds `localAddress`): tests
 * never share a counter and never wait for the conformance project's 10 s windows. The sliding
 * test uses `test/fixtures/ratelimit` (3 per second); X-Forwarded-For trust uses
 * `test/fixtures/proxy` (`trustedProxies: ['127.0.0.1']`).
 */
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, startServer, type TestServer } from '../helpers/server.js';

interface Answer {
  status: number;
  json: any;
  headers: Record<string, string | string[] | undefined>;
  /** performance.now() when the request was sent and when its answer arrived. */
  sentAt: number;
  doneAt: number;
}

let nextIp = 10;
/** A loopback address no other test uses: its own counters everywhere. */
const freshIp = () => `127.0.${Math.floor(nextIp / 250)}.${(nextIp++ % 250) + 2}`;

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const q = (body: unknown) => `?body=${encodeURIComponent(JSON.stringify(body))}`;

/**
 * One request from `ip`. GETs carry their JSON in `?body=`; a stream route (`/db/stream…`) is read
 * up to its first NDJSON payload and then closed, or fully when it answers an error.
 */
function hit(s: TestServer, ip: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const isGet = method === 'GET';
  const url = s.base + path + (isGet && body !== undefined ? q(body) : '');
  const payload = !isGet && body !== undefined ? (typeof body === 'string' ? body : JSON.stringify(body)) : undefined;
  const sentAt = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        localAddress: ip,
        headers: {
          accept: 'application/x-ndjson, application/json',
          ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
          ...headers,
        },
      },
      (res) => {
        let text = '';
        const isStream = res.statusCode === 200 && String(res.headers['content-type']).startsWith('application/x-ndjson');
        const finish = () => {
          let json: unknown;
          try {
            json = JSON.parse(isStream ? text.slice(0, text.indexOf('\n')) : text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, json, headers: res.headers, sentAt, doneAt: performance.now() });
        };
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
          if (isStream && text.includes('\n')) {
            finish();
            req.destroy();
          }
        });
        res.on('end', finish);
        res.on('error', () => undefined);
      },
    );
    req.on('error', (err) => (req.destroyed && (err as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(err)));
    req.end(payload);
  });
}

function expectAdmitted(r: Answer, limit: number, remaining: number, what: string): void {
  expect(r.status, `${what}: ${JSON.stringify(r.json)}`).toBeLessThan(300);
  expect(r.headers['ratelimit-limit'], what).toBe(String(limit));
  expect(r.headers['ratelimit-remaining'], what).toBe(String(remaining));
}

/** A 429 as SPEC §2 / §9 / §13.11 describe it. */
function expectLimited(r: Answer, limit: number, windowSeconds: number, what: string): void {
  expect(r.status, `${what}: ${JSON.stringify(r.json)}`).toBe(429);
  expect(r.json?.error?.code, what).toBe('RATE_LIMITED');
  const retryAfter = Number(r.headers['retry-after']);
  expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= windowSeconds, `${what}: Retry-After ${r.headers['retry-after']}`).toBe(true);
  expect(r.headers['ratelimit-limit'], what).toBe(String(limit));
  expect(r.headers['ratelimit-remaining'], what).toBe('0');
  const reset = Number(r.headers['ratelimit-reset']);
  expect(Number.isInteger(reset) && reset >= 0 && reset <= windowSeconds, `${what}: RateLimit-Reset ${r.headers['ratelimit-reset']}`).toBe(true);
}

describe('the conformance project (SPEC §12 `limited`: 3 per 10 s; update default; delete null; custom:bump 2 per 10 s)', () => {
  let s: TestServer;
  let rowId: string;
  beforeAll(async () => {
    s = await startServer();
    const r = await hit(s, freshIp(), 'POST', '/db/many', { table: 'limited', objects: [{ title: 'a' }, { title: 'b' }] });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    rowId = r.json.data[0].id;
  });
  afterAll(async () => {
    await s?.dispose();
  });

  type Form = [method: string, path: string, body: () => unknown];
  const byId = () => ({ table: 'limited', where: { id: { eq: rowId } } });
  // Every operation → its policy, with every route that shares the counter (SPEC §9).
  const mapping: { op: string; limit: number; window: number; forms: Form[] }[] = [
    {
      op: 'get',
      limit: 3,
      window: 10,
      forms: [
        ['GET', '/db', byId],
        ['GET', '/db/stream', byId],
      ],
    },
    {
      op: 'list',
      limit: 3,
      window: 10,
      forms: [
        ['GET', '/db/list', () => ({ table: 'limited', limit: 1 })],
        ['GET', '/db/stream/list', () => ({ table: 'limited', limit: 1 })],
      ],
    },
    {
      op: 'count',
      limit: 3,
      window: 10,
      forms: [
        ['GET', '/db/count', () => ({ table: 'limited' })],
        ['GET', '/db/stream/count', () => ({ table: 'limited' })],
      ],
    },
    {
      op: 'create',
      limit: 3,
      window: 10,
      forms: [
        ['POST', '/db', () => ({ table: 'limited', object: { title: 'c' } })],
        ['POST', '/db/many', () => ({ table: 'limited', objects: [{ title: 'c1' }, { title: 'c2' }] })],
      ],
    },
    {
      op: 'custom:bump',
      limit: 2,
      window: 10,
      forms: [
        ['PATCH', '/db/custom/bump', byId],
        ['PATCH', '/db/custom/bump/many', byId],
      ],
    },
    // `update` has no override: the default 100 per minute.
    {
      op: 'update',
      limit: 100,
      window: 60,
      forms: [
        ['PATCH', '/db', () => ({ ...byId(), updates: [{ column: 'title', value: 'u' }] })],
        ['PATCH', '/db/many', () => ({ ...byId(), updates: [{ column: 'title', value: 'um' }] })],
      ],
    },
  ];

  for (const { op, limit, window, forms } of mapping) {
    it(`${op}: ${forms.map((f) => `${f[0]} ${f[1]}`).join(' and ')} share one counter of ${limit}`, async () => {
      const ip = freshIp();
      for (let i = 0; i < limit; i++) {
        const [method, path, body] = forms[i % forms.length]!;
        expectAdmitted(await hit(s, ip, method, path, body()), limit, limit - i - 1, `${op} #${i + 1} via ${path}`);
      }
      for (const [method, path, body] of forms) expectLimited(await hit(s, ip, method, path, body()), limit, window, `${op} over the limit via ${path}`);
    });
  }

  it('delete is unlimited (`null`): no counter, no RateLimit headers', async () => {
    const ip = freshIp();
    for (let i = 0; i < 12; i++) {
      const r = await hit(s, ip, 'DELETE', i % 2 ? '/db/many' : '/db', { table: 'limited', where: { title: { eq: 'no such row' } } });
      expect([204, 404]).toContain(r.status);
      expect(r.headers['ratelimit-limit']).toBeUndefined();
    }
  });

  it('each operation keeps its own counter, and update is not custom:bump', async () => {
    const ip = freshIp();
    for (let i = 0; i < 3; i++) expect((await hit(s, ip, 'GET', '/db', byId())).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await hit(s, ip, 'PATCH', '/db/custom/bump', byId())).status).toBe(200);
    expect((await hit(s, ip, 'GET', '/db', byId())).status).toBe(429);
    expect((await hit(s, ip, 'PATCH', '/db/custom/bump', byId())).status).toBe(429);
    // The same IP still has fresh list, count, create and update counters.
    expectAdmitted(await hit(s, ip, 'GET', '/db/list', { table: 'limited' }), 3, 2, 'list');
    expectAdmitted(await hit(s, ip, 'GET', '/db/count', { table: 'limited' }), 3, 2, 'count');
    expectAdmitted(await hit(s, ip, 'POST', '/db', { table: 'limited', object: { title: 'x' } }), 3, 2, 'create');
    expectAdmitted(await hit(s, ip, 'PATCH', '/db', { ...byId(), updates: [{ column: 'n', value: { increment: 1 } }] }), 100, 99, 'update');
    // And another IP is untouched by all of this.
    expectAdmitted(await hit(s, freshIp(), 'GET', '/db', byId()), 3, 2, 'get from another IP');
  });

  it('an unregistered custom name is 404 and costs no counter', async () => {
    const ip = freshIp();
    for (let i = 0; i < 5; i++) {
      const r = await hit(s, ip, 'PATCH', i % 2 ? '/db/custom/nope/many' : '/db/custom/nope', byId());
      expect(r.status).toBe(404);
      expect(r.json.error.code).toBe('NOT_FOUND');
    }
    expectAdmitted(await hit(s, ip, 'PATCH', '/db/custom/bump', byId()), 2, 1, 'bump after five unknown names');
    expectAdmitted(await hit(s, ip, 'PATCH', '/db/custom/bump', byId()), 2, 0, 'second bump');
    expect((await hit(s, ip, 'PATCH', '/db/custom/nope', byId())).status).toBe(404);
    expectLimited(await hit(s, ip, 'PATCH', '/db/custom/bump', byId()), 2, 10, 'third bump');
  });

  it('429 comes before the operations step: an over-limit malformed body is 429, not 400', async () => {
    const ip = freshIp();
    const badList = { table: 'limited', where: { nope: { eq: 1 } } };
    // Under the limit the malformed `where` is a 400 — and counts, since it passed step 1.
    for (let i = 0; i < 3; i++) {
      const r = await hit(s, ip, 'GET', '/db/list', badList);
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('BAD_REQUEST');
    }
    expectLimited(await hit(s, ip, 'GET', '/db/list', badList), 3, 10, 'malformed list over the limit');
    expectLimited(await hit(s, ip, 'GET', '/db/stream/list', badList), 3, 10, 'malformed stream-list over the limit');
    expectLimited(await hit(s, ip, 'GET', '/db/list', { table: 'limited', limit: 5000 }), 3, 10, 'list over the maximum limit');

    const other = freshIp();
    for (let i = 0; i < 3; i++) expect((await hit(s, other, 'POST', '/db', { table: 'limited', object: { title: `ok${i}` } })).status).toBe(200);
    for (const object of [{ title: 5 }, { nope: 1 }, { id: 'lm_0000000000000000', title: 'x' }]) {
      expectLimited(await hit(s, other, 'POST', '/db', { table: 'limited', object }), 3, 10, `create ${JSON.stringify(object)}`);
    }
  });

  it('429 comes before the rules: a table whose rules deny everything still answers 429 past the limit', async () => {
    // `secrets` has no rules (403 for everything) and no policies: the default 100 per minute.
    const ip = freshIp();
    for (let i = 0; i < 100; i++) {
      const r = await hit(s, ip, 'GET', '/db/count', { table: 'secrets' });
      expect(r.status, `request ${i + 1}`).toBe(403);
      expect(r.json.error.code).toBe('FORBIDDEN');
    }
    expectLimited(await hit(s, ip, 'GET', '/db/count', { table: 'secrets' }), 100, 60, 'secrets count #101');
    expectLimited(await hit(s, ip, 'GET', '/db/count', { table: 'secrets', where: { nope: { eq: 1 } } }), 100, 60, 'secrets count, malformed, #102');
  });

  it('a spoofed X-Forwarded-For is ignored: no trusted proxies by default (SPEC §13.1)', async () => {
    const ip = freshIp();
    for (let i = 0; i < 3; i++) {
      expectAdmitted(await hit(s, ip, 'GET', '/db/count', { table: 'limited' }, { 'x-forwarded-for': `203.0.113.${i + 1}` }), 3, 2 - i, `count #${i + 1}`);
    }
    for (const xff of ['203.0.113.99', '198.51.100.7, 203.0.113.50', '127.0.0.1']) {
      expectLimited(await hit(s, ip, 'GET', '/db/count', { table: 'limited' }, { 'x-forwarded-for': xff }), 3, 10, `X-Forwarded-For: ${xff}`);
    }
  });
});

describe('the sliding window (test/fixtures/ratelimit: `ticks` count 3 per 1 s)', () => {
  const LIMIT = 3;
  const WINDOW_MS = 1000;
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer({ project: join(ROOT, 'test/fixtures/ratelimit') });
  });
  afterAll(async () => {
    await s?.dispose();
  });
  const count = (ip: string) => hit(s, ip, 'GET', '/db/count', { table: 'ticks' });

  it('no window-length interval admits more than maxRequests, and the window slides', async () => {
    const ip = freshIp();
    const answers: Answer[] = [];
    const deadline = performance.now() + 20_000;
    // Requests every few milliseconds until the limit has refilled a few times.
    while (answers.filter((a) => a.status === 200).length < 3 * LIMIT + 1 && performance.now() < deadline) {
      answers.push(await count(ip));
      await pause(5);
    }
    const admitted = answers.filter((a) => a.status === 200);
    expect(admitted.length, 'the window slid and admitted requests again').toBeGreaterThan(LIMIT);
    for (const a of answers) expect([200, 429]).toContain(a.status);
    for (const a of answers.filter((x) => x.status === 429)) expectLimited(a, LIMIT, 1, 'over the limit');
    // The server decided each request between its send and its answer, so admissions i and
    // i + LIMIT were at least (doneAt[i+LIMIT] - sentAt[i]) apart at most: if that is under the
    // window, some window-length interval admitted LIMIT + 1 requests. (2 ms: Date.now rounding.)
    for (let i = 0; i + LIMIT < admitted.length; i++) {
      expect(admitted[i + LIMIT]!.doneAt - admitted[i]!.sentAt, `admissions ${i} and ${i + LIMIT}`).toBeGreaterThanOrEqual(WINDOW_MS - 2);
    }
  });

  it('rejected requests do not count: a client that never stops asking is admitted again', async () => {
    const ip = freshIp();
    for (let i = 0; i < LIMIT; i++) expectAdmitted(await count(ip), LIMIT, LIMIT - 1 - i, `count #${i + 1}`);
    const rejected: Answer[] = [];
    let admitted: Answer | undefined;
    const deadline = performance.now() + 20_000;
    while (!admitted && performance.now() < deadline) {
      const r = await count(ip);
      if (r.status === 200) admitted = r;
      else rejected.push(r);
      await pause(5);
    }
    expect(admitted, 'admitted again while being hammered').toBeDefined();
    // Had the 429s counted, the window before the admission held these (each decided within it),
    // which is already LIMIT or more: the request would have been refused.
    const inWindow = rejected.filter((r) => admitted!.doneAt - r.sentAt < WINDOW_MS - 2);
    expect(inWindow.length, 'enough rejections inside the last window for the test to mean something').toBeGreaterThanOrEqual(LIMIT);
  });

  it('waiting Retry-After seconds is enough to be admitted', async () => {
    const ip = freshIp();
    for (let i = 0; i < LIMIT; i++) expect((await count(ip)).status).toBe(200);
    const refused = await count(ip);
    expectLimited(refused, LIMIT, 1, 'fourth count');
    await pause(Number(refused.headers['retry-after']) * 1000);
    expectAdmitted(await count(ip), LIMIT, LIMIT - 1, 'after Retry-After');
  });
});

describe('X-Forwarded-For from a trusted proxy (test/fixtures/proxy: trustedProxies 127.0.0.1; `hits` count 2 per minute)', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer({ project: join(ROOT, 'test/fixtures/proxy') });
  });
  afterAll(async () => {
    await s?.dispose();
  });
  const count = (peer: string, xff?: string) => hit(s, peer, 'GET', '/db/count', { table: 'hits' }, xff === undefined ? {} : { 'x-forwarded-for': xff });

  it('through the proxy each forwarded client has its own counter', async () => {
    expectAdmitted(await count('127.0.0.1', '203.0.113.1'), 2, 1, 'client 1 #1');
    expectAdmitted(await count('127.0.0.1', '203.0.113.1'), 2, 0, 'client 1 #2');
    expectLimited(await count('127.0.0.1', '203.0.113.1'), 2, 60, 'client 1 #3');
    expectAdmitted(await count('127.0.0.1', '203.0.113.2'), 2, 1, 'client 2 #1');
    // The proxy's own requests (no header) are the proxy's counter, not any client's.
    expectAdmitted(await count('127.0.0.1'), 2, 1, 'the proxy itself');
  });

  it('the client is the right-most address that is not a trusted proxy; entries left of it are not believed', async () => {
    expectAdmitted(await count('127.0.0.1', '198.51.100.1, 203.0.113.10'), 2, 1, 'forged left entry, client .10');
    expectAdmitted(await count('127.0.0.1', '198.51.100.2, 203.0.113.10'), 2, 0, 'another forged left entry, same client');
    expectLimited(await count('127.0.0.1', '203.0.113.10'), 2, 60, 'client .10 without forgery');
    // A trusted hop on the right is skipped.
    expectAdmitted(await count('127.0.0.1', '203.0.113.11, 127.0.0.1'), 2, 1, 'client .11 behind two proxies');
    expectAdmitted(await count('127.0.0.1', '203.0.113.11'), 2, 0, 'client .11 directly');
    expectLimited(await count('127.0.0.1', '203.0.113.11, 127.0.0.1'), 2, 60, 'client .11 behind two proxies, over');
  });

  it('a peer that is not a trusted proxy is counted by its socket address whatever it forwards', async () => {
    const peer = freshIp();
    expectAdmitted(await count(peer, '203.0.113.20'), 2, 1, 'untrusted #1');
    expectAdmitted(await count(peer, '203.0.113.21'), 2, 0, 'untrusted #2');
    expectLimited(await count(peer, '203.0.113.22'), 2, 60, 'untrusted #3 with yet another header');
    expectLimited(await count(peer), 2, 60, 'untrusted #4 without the header');
    // The forwarded addresses it named were never charged.
    expectAdmitted(await count('127.0.0.1', '203.0.113.20'), 2, 1, 'the named client through the real proxy');
  });
});
