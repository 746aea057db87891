import { describe, expect, it } from 'vitest';
import { ApiError } from './errors.js';
import { checkDataSize, checkJsonSize, jsonSizeAtLeast } from './response-size.js';

const sizeOf = (v: unknown) => Buffer.byteLength(JSON.stringify(v));

describe('response size (docs/reference/data.md maxResponseBytes)', () => {
  const samples: unknown[] = [null, 1, 'x', '', 'héllo 😀', { a: 1, b: 'two', c: [true, null, 3.5] }, [{ id: 'tk_1', title: 'a "quoted" \n line' }], { items: [{ s: '\u0000\u0001' }], total: 1 }];
  it('estimates a lower bound of the UTF-8 JSON size', () => {
    for (const v of samples) expect(jsonSizeAtLeast(v, Infinity), JSON.stringify(v)).toBeLessThanOrEqual(sizeOf(v));
  });

  it('refuses data past the bound, with RESPONSE_TOO_LARGE (400)', () => {
    const rows = { items: Array.from({ length: 20 }, () => ({ payload: 'x'.repeat(1000) })), total: 20 };
    expect(() => checkDataSize(rows, 30_000)).not.toThrow();
    const err = (() => {
      try {
        checkDataSize(rows, 15_000);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 'RESPONSE_TOO_LARGE', status: 400 });
  });

  it('is exact where escapes and multi-byte characters make JSON longer than its characters', () => {
    const escaped = { s: '\u0001'.repeat(1000) }; // 6 bytes each in JSON
    expect(() => checkDataSize(escaped, 3000)).toThrow(ApiError);
    expect(() => checkJsonSize(JSON.stringify({ s: 'é'.repeat(1000) }), 1500)).toThrow(ApiError);
    expect(() => checkJsonSize(JSON.stringify({ s: 'e'.repeat(1000) }), 1500)).not.toThrow();
  });

  it('stops walking once past the bound', () => {
    const huge = Array.from({ length: 100_000 }, () => 'x'.repeat(100));
    expect(jsonSizeAtLeast(huge, 1000)).toBeLessThan(2000);
  });
});
