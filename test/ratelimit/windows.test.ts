/**
 * End-to-end: the sliding window (`test/fixtures/ratelimit`: 3 per second) and X-Forwarded-For
 * trust (`test/fixtures/proxy`: `trustedProxies: ['127.0.0.1']`) of docs/reference/rate-limits.md.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useServer } from '../helpers/lifecycle.js';
import { pause } from '../helpers/poll.js';
import { expectAdmitted, expectLimited, freshIp, hit, type Answer } from '../helpers/ratelimit.js';
import { ROOT } from '../helpers/server.js';

describe('the sliding window (test/fixtures/ratelimit: `ticks` count 3 per 1 s)', () => {
  const LIMIT = 3;
  const WINDOW_MS = 1000;
  const s = useServer({ project: join(ROOT, 'test/fixtures/ratelimit') });
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
  const s = useServer({ project: join(ROOT, 'test/fixtures/proxy') });
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
