import { describe, expect, it } from 'vitest';
import { Lru } from './lru.js';

describe('Lru (second chance)', () => {
  it('never holds more than max entries, whatever the traffic', () => {
    const c = new Lru<number, number>(100);
    for (let i = 0; i < 10_000; i++) {
      c.set(i, i);
      if (i % 3 === 0) c.get(i - 50);
    }
    expect(c.size).toBe(100);
  });

  it('keeps an entry that was used since it was added, and drops the oldest unused one', () => {
    const c = new Lru<string, number>(3);
    c.set('a', 1);
    c.set('b', 2);
    c.set('c', 3);
    expect(c.get('a')).toBe(1);
    c.set('d', 4); // 'a' was used: it survives, 'b' goes
    expect(c.get('a')).toBe(1);
    expect(c.get('b')).toBeUndefined();
    expect(c.get('c')).toBe(3);
    expect(c.get('d')).toBe(4);
  });

  it('max 0 stores nothing; delete and clear forget', () => {
    const none = new Lru<string, number>(0);
    none.set('a', 1);
    expect(none.get('a')).toBeUndefined();
    const c = new Lru<string, number>(2);
    c.set('a', 1);
    c.delete('a');
    expect(c.get('a')).toBeUndefined();
    c.set('b', 2);
    c.clear();
    expect(c.size).toBe(0);
  });
});
