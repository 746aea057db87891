/**
 * Rate-limit tests (docs/reference/rate-limits.md) speak from many loopback addresses: counters are keyed
 * by client IP × table × operation, and 127.0.0.0/8 is all loopback on Linux, so every test binds
 * its own `localAddress` and never shares a counter or waits for another test's window.
 */
import { request } from 'node:http';
import { expect } from 'vitest';
import { parseJson, type Envelope, type TestServer } from './server.js';

export interface Answer {
  status: number;
  json: Envelope;
  headers: Record<string, string | string[] | undefined>;
  /** performance.now() when the request was sent and when its answer arrived. */
  sentAt: number;
  doneAt: number;
}

let nextIp = 10;
/** A loopback address no other test uses: its own counters everywhere. */
export const freshIp = () => `127.0.${Math.floor(nextIp / 250)}.${(nextIp++ % 250) + 2}`;

const q = (body: unknown) => `?body=${encodeURIComponent(JSON.stringify(body))}`;

/**
 * One request from `ip`. GETs carry their JSON in `?body=`; a stream route (`/db/stream…`) is read
 * up to its first NDJSON payload and then closed, or fully when it answers an error.
 */
export function hit(s: TestServer, ip: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
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
          const json = parseJson<Envelope>(isStream ? text.slice(0, text.indexOf('\n')) : text);
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

export function expectAdmitted(r: Answer, limit: number, remaining: number, what: string): void {
  expect(r.status, `${what}: ${JSON.stringify(r.json)}`).toBeLessThan(300);
  expect(r.headers['ratelimit-limit'], what).toBe(String(limit));
  expect(r.headers['ratelimit-remaining'], what).toBe(String(remaining));
}

/** A 429 as docs/reference/conventions.md and docs/reference/rate-limits.md describe it. */
export function expectLimited(r: Answer, limit: number, windowSeconds: number, what: string): void {
  expect(r.status, `${what}: ${JSON.stringify(r.json)}`).toBe(429);
  expect(r.json?.error?.code, what).toBe('RATE_LIMITED');
  const retryAfter = Number(r.headers['retry-after']);
  expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= windowSeconds, `${what}: Retry-After ${r.headers['retry-after']}`).toBe(true);
  expect(r.headers['ratelimit-limit'], what).toBe(String(limit));
  expect(r.headers['ratelimit-remaining'], what).toBe('0');
  const reset = Number(r.headers['ratelimit-reset']);
  expect(Number.isInteger(reset) && reset >= 0 && reset <= windowSeconds, `${what}: RateLimit-Reset ${r.headers['ratelimit-reset']}`).toBe(true);
}
