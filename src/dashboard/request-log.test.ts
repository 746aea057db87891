import { describe, expect, it } from 'vitest';
import { RequestLog, type RequestEntry } from './request-log.js';

const entry = (i: number, status = 200, route = 'GET /db/list'): RequestEntry => ({ at: i, method: 'GET', route, status, latencyMs: 1, requestId: `r${i}`, ip: '127.0.0.1' });

describe('RequestLog', () => {
  it('keeps only the newest entries, newest first', () => {
    const log = new RequestLog(3);
    for (let i = 1; i <= 5; i++) log.record(entry(i));
    expect(log.count).toBe(3);
    expect(log.query().map((e) => e.requestId)).toEqual(['r5', 'r4', 'r3']);
  });

  it('filters by status class, route and request id, and honours the limit', () => {
    const log = new RequestLog(10);
    log.record(entry(1, 200));
    log.record(entry(2, 404, 'GET /db'));
    log.record(entry(3, 500));
    log.record(entry(4, 201));
    expect(log.query({ statusClass: '2xx' }).map((e) => e.requestId)).toEqual(['r4', 'r1']);
    expect(log.query({ statusClass: '5xx' }).map((e) => e.status)).toEqual([500]);
    expect(log.query({ route: 'GET /db/list' })).toHaveLength(3);
    expect(log.query({ requestId: 'r2' })[0]!.status).toBe(404);
    expect(log.query({ limit: 1 })).toHaveLength(1);
  });
});
