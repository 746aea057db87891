/** LiveEngine.invalidate: changes made on another node arrive without row images (issue #15). */
import { describe, expect, it } from 'vitest';
import { createLiveEngine } from './engine.js';
import { FakeDb, settle } from './fake-db.js';
import { BOARD, query, task, TASKS, USERS } from './test-fixtures.js';
import type { LiveQuery } from './types.js';

function setup() {
  const db = new FakeDb();
  const engine = createLiveEngine({ run: db.run });
  db.engine = engine;
  const open = (q: LiveQuery) => {
    const pushes: string[] = [];
    engine.subscribe(q, { initial: db.answer(q), since: engine.version, push: (json) => pushes.push(json), fail: () => {} }, '10.0.0.1');
    return pushes;
  };
  return { db, engine, open };
}

describe('live engine: invalidate', () => {
  it('re-runs the queries reading the named tables (views included), and only those', async () => {
    const { db, engine, open } = setup();
    const tasks = open(query('count', TASKS, { ownerId: { eq: 'a' } }));
    const board = open(query('list', BOARD));
    const users = open(query('count', USERS));
    // Another node inserted a row: the store has it, this engine heard only "tasks changed".
    db.table('tasks').set('tk_remote', task({ id: 'tk_remote', ownerId: 'a' }));
    engine.invalidate(['tasks']);
    await settle(engine);
    expect(db.runs).toBe(2);
    expect(tasks.map((j) => JSON.parse(j).data)).toEqual([1]);
    expect(board).toHaveLength(1);
    expect(users).toEqual([]);
  });

  it('without tables (missed notices) re-runs every query; unchanged results push nothing', async () => {
    const { db, engine, open } = setup();
    const tasks = open(query('count', TASKS));
    const users = open(query('count', USERS));
    engine.invalidate();
    await settle(engine);
    expect(db.runs).toBe(2);
    expect(tasks).toEqual([]);
    expect(users).toEqual([]);
  });
});
