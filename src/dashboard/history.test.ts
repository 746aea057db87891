import { describe, expect, it } from 'vitest';
import { MetricsHistory } from './history.js';

describe('MetricsHistory', () => {
  it('buckets requests per minute, fills quiet minutes with zeros and keeps one hour', () => {
    let now = Date.UTC(2026, 10, 23, 10, 0, 5);
    const h = new MetricsHistory({ streams: () => 2, writeQueue: () => 0 }, () => now);
    h.record(200, 10);
    h.record(500, 30);
    h.record(404, 20);
    let s = h.samples();
    expect(s).toHaveLength(1);
    expect(s[0]).toMatchObject({ requests: 3, serverErrors: 1, clientErrors: 1, p95Ms: 30, streams: 2 });
    now += 3 * 60_000;
    h.record(200, 5);
    s = h.samples();
    expect(s.map((x) => x.requests)).toEqual([3, 0, 0, 1]);
    now += 2 * 3_600_000;
    s = h.samples();
    expect(s.length).toBeLessThanOrEqual(61);
    expect(s.every((x) => x.requests === 0)).toBe(true);
  });
});
