import { describe, expect, it } from 'vitest';
import { sharedPromise } from './shared-promise.js';

describe('sharedPromise', () => {
  it('runs the work once for every caller while it succeeds', async () => {
    let runs = 0;
    const get = sharedPromise(async () => ++runs);
    expect(await Promise.all([get(), get()])).toEqual([1, 1]);
    expect(await get()).toBe(1);
    expect(runs).toBe(1);
  });

  it('forgets a failure: the next call runs the work again', async () => {
    let runs = 0;
    const get = sharedPromise(async () => {
      runs++;
      if (runs === 1) throw new Error('transient');
      return runs;
    });
    await expect(get()).rejects.toThrow('transient');
    expect(await get()).toBe(2);
    expect(await get()).toBe(2);
  });
});
