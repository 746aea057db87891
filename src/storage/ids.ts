/**
 * Row ids: `<prefix>_<remainder>` (docs/reference/columns.md). The remainder is 20 chars of [0-9a-z]: 10 of
 * zero-padded base-36 milliseconds, 4 of a per-millisecond counter, 6 random. Fixed width makes
 * the string order the creation order within one process, even if the clock steps back.
 */
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';
const RANDOM_POOL = 4096;

export function createIdGenerator(clock: () => number = Date.now): (prefix: string) => string {
  let lastMs = 0;
  let counter = 0;
  let pool = randomBytes(RANDOM_POOL);
  let poolAt = 0;

  const random6 = (): string => {
    if (poolAt + 6 > pool.length) {
      pool = randomBytes(RANDOM_POOL);
      poolAt = 0;
    }
    let s = '';
    for (let i = 0; i < 6; i++) s += ALPHABET[pool[poolAt++]! % 36];
    return s;
  };

  return (prefix: string) => {
    let ms = clock();
    if (ms <= lastMs) {
      ms = lastMs;
      counter++;
      // 36^4 ids within one millisecond: borrow the next millisecond rather than wrap.
      if (counter >= 1_679_616) {
        ms = ++lastMs;
        counter = 0;
      }
    } else {
      lastMs = ms;
      counter = 0;
    }
    return `${prefix}_${ms.toString(36).padStart(10, '0')}${counter.toString(36).padStart(4, '0')}${random6()}`;
  };
}

export const newId = createIdGenerator();
