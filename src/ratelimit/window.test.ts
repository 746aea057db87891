import { describe, expect, it } from 'vitest';
import { parseWindow } from './window.js';

describe('parseWindow', () => {
  it('accepts milliseconds and unit strings', () => {
    expect(parseWindow(1500)).toBe(1500);
    expect(parseWindow('500ms')).toBe(500);
    expect(parseWindow('10s')).toBe(10_000);
    expect(parseWindow('1m')).toBe(60_000);
    expect(parseWindow('2h')).toBe(7_200_000);
    expect(parseWindow('1d')).toBe(86_400_000);
  });

  it.each([0, -1, 1.5, NaN, Infinity, 2 ** 60, '', '10', 's', '1.5s', '10 s', ' 10s', '10S', '-1s', '1e3ms', '10sec', '0s', '1w', '1m1s'])('rejects %j with a clear error', (bad) => {
    expect(() => parseWindow(bad, 'table "t" policy "list"')).toThrow(/table "t" policy "list": window/);
  });

  it('rejects non-number, non-string values', () => {
    expect(() => parseWindow(null)).toThrow(/window must be milliseconds/);
    expect(() => parseWindow(undefined)).toThrow(/window must be milliseconds/);
    expect(() => parseWindow({ ms: 5 })).toThrow(/window must be milliseconds/);
  });
});
