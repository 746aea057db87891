import { describe, expect, it } from 'vitest';
import { encodeNotice, GapDetector, noticeOf } from './redis.js';

describe('change notices', () => {
  it('ship the rows with their images under the size limit, ids only past it', () => {
    const changes = [
      { table: 'events', op: 'update' as const, id: 'ev_1', before: { id: 'ev_1', title: 'a' }, after: { id: 'ev_1', title: 'b' } },
      { table: 'events', op: 'delete' as const, id: 'ev_2', before: { id: 'ev_2', title: 'c' }, after: null },
    ];
    const small = JSON.parse(encodeNotice('n', 1, changes));
    expect(small.rows).toEqual(changes);
    expect(small.changes).toEqual([
      { table: 'events', op: 'update', ids: ['ev_1'] },
      { table: 'events', op: 'delete', ids: ['ev_2'] },
    ]);
    const big = JSON.parse(encodeNotice('n', 2, changes, 100));
    expect(big.rows).toBeUndefined();
    expect(big.changes).toEqual(small.changes);
  });

  it('carry table, operation and ids only, grouped per commit', () => {
    const row = { id: 'ev_1', secret: 'never on the bus' };
    const n = noticeOf('nodeA', 7, [
      { table: 'events', op: 'insert', id: 'ev_1', before: null, after: row },
      { table: 'events', op: 'insert', id: 'ev_2', before: null, after: { id: 'ev_2' } },
      { table: 'tasks', op: 'delete', id: 'tk_1', before: { id: 'tk_1' }, after: null },
    ]);
    expect(n).toEqual({
      node: 'nodeA',
      seq: 7,
      changes: [
        { table: 'events', op: 'insert', ids: ['ev_1', 'ev_2'] },
        { table: 'tasks', op: 'delete', ids: ['tk_1'] },
      ],
    });
    expect(JSON.stringify(n)).not.toContain('never on the bus');
  });

  it('a jump in a node’s sequence is a gap; the first notice of a node is not', () => {
    const g = new GapDetector();
    expect(g.seen('a', 5)).toBe(false);
    expect(g.seen('a', 6)).toBe(false);
    expect(g.seen('b', 1)).toBe(false);
    expect(g.seen('a', 8)).toBe(true);
    expect(g.seen('a', 9)).toBe(false);
    g.reset();
    expect(g.seen('a', 20)).toBe(false);
  });
});
