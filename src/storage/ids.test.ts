import { describe, expect, it } from 'vitest';
import { createIdGenerator } from './ids.js';

describe('ids', () => {
  it('have the docs/reference/columns.md shape and sort in creation order, even within a millisecond or if the clock steps back', () => {
    let t = 1_700_000_000_000;
    const clock = () => t;
    const next = createIdGenerator(clock);
    const ids: string[] = [];
    for (let i = 0; i < 2000; i++) {
      if (i % 500 === 0) t += 1;
      if (i === 1500) t -= 100; // clock steps back
      ids.push(next('tk'));
    }
    for (const id of ids) expect(id).toMatch(/^tk_[0-9a-z]{16,32}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
