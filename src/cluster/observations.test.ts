/**
 * A worker's answered requests reach the primary as they were observed (observations.ts): every
 * field, in order, through JSON as node's IPC channel carries them, with the latency to the
 * hundredth of a millisecond the dashboard and the percentiles show.
 */
import { describe, expect, it } from 'vitest';
import type { Observation, ObservationBatch } from './ipc-protocol.js';
import { eachObservation, ObservationEncoder } from './observations.js';

const decoded = (b: ObservationBatch): Observation[] => {
  const out: Observation[] = [];
  eachObservation(JSON.parse(JSON.stringify(b)) as ObservationBatch, (...o) => out.push(o));
  return out;
};

describe('observations on the wire', () => {
  it('arrive whole and in order, the latency rounded to 0.01 ms', () => {
    const t = 1_764_000_000_123;
    const sent: Observation[] = [
      ['GET', 'GET /db', 200, 0.123456, 'a1b2c3d4-1', '127.0.0.1', t],
      ['POST', 'POST /db', 201, 12.345, 'client-id', '::1', t + 7],
      ['GET', 'GET /db', 404, 1.005, 'a1b2c3d4-2', '127.0.0.1', t + 7],
      ['GET', 'unmatched', 404, 0, 'a1b2c3d4-3', '10.0.0.1', t - 3], // a clock stepped back
      ['DELETE', 'DELETE /db/many', 500, 30_001.999, 'x'.repeat(128), '10.0.0.1', t + 190],
    ];
    const enc = new ObservationEncoder();
    for (const o of sent) enc.add(o);
    expect(enc.size).toBe(5);
    const batch = enc.take();
    expect(decoded(batch)).toEqual(sent.map(([m, r, s, ms, id, ip, at]) => [m, r, s, Math.round(ms * 100) / 100, id, ip, at]));
    // Each name once per batch, every number a small integer.
    expect(batch.names).toEqual(['GET', 'GET /db', '127.0.0.1', 'POST', 'POST /db', '::1', 'unmatched', '10.0.0.1', 'DELETE', 'DELETE /db/many']);
    expect(batch.rows.every((n) => Number.isSafeInteger(n) && Math.abs(n) < 2 ** 31)).toBe(true);
  });

  it('start empty again after each batch, with their own names and time base', () => {
    const enc = new ObservationEncoder();
    enc.add(['GET', 'GET /db', 200, 1, 'a', 'ip1', 1000]);
    enc.take();
    expect(enc.size).toBe(0);
    enc.add(['PATCH', 'PATCH /db', 200, 2.5, 'b', 'ip2', 5000]);
    const second = enc.take();
    expect(second.names).toEqual(['PATCH', 'PATCH /db', 'ip2']);
    expect(decoded(second)).toEqual([['PATCH', 'PATCH /db', 200, 2.5, 'b', 'ip2', 5000]]);
    expect(decoded(enc.take())).toEqual([]);
  });

  it('the percentiles read the same from rounded latencies (rounding keeps their order)', () => {
    const ms = Array.from({ length: 1000 }, (_, i) => ((i * 7919) % 1000) / 37.3);
    const p = (xs: number[], q: number) => Math.round([...xs].sort((a, b) => a - b)[Math.floor(q * xs.length)]! * 100) / 100;
    const enc = new ObservationEncoder();
    for (const m of ms) enc.add(['GET', 'GET /db', 200, m, 'id', 'ip', 0]);
    const got = decoded(enc.take()).map((o) => o[3]);
    for (const q of [0.5, 0.95, 0.99]) expect(p(got, q)).toBe(p(ms, q));
  });
});
