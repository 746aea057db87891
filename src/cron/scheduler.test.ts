import { describe, expect, it } from 'vitest';
import type { Runtime } from '../core/runtime.js';
import { startScheduler } from './scheduler.js';

const rt = { log: { error: () => {}, warn: () => {} }, driver: { dialect: {} } } as unknown as Runtime;

describe('scheduler run-now', () => {
  it('joins a run in progress instead of starting a second one, and records recent runs', async () => {
    let running = 0;
    let maxRunning = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const s = startScheduler(rt, [
      {
        name: 'slow',
        schedule: '0 0 1 1 *',
        run: async () => {
          maxRunning = Math.max(maxRunning, ++running);
          await gate;
          running--;
        },
      },
    ]);
    const first = s.runNow('slow');
    const second = s.runNow('slow');
    expect(s.recentRuns('slow')![0]!.status).toBe('running');
    release();
    const [a, b] = await Promise.all([first, second]);
    expect(a).toBe(b);
    expect(maxRunning).toBe(1);
    expect(a.status).toBe('ok');
    expect(a.trigger).toBe('manual');
    expect(s.recentRuns('slow')).toHaveLength(1);
    expect(s.recentRuns('nope')).toBeUndefined();
    await s.stop();
  });

  it('keeps the error of a failed run', async () => {
    const s = startScheduler(rt, [{ name: 'bad', schedule: '0 0 1 1 *', run: async () => Promise.reject(new Error('boom')) }]);
    const run = await s.runNow('bad');
    expect(run).toMatchObject({ status: 'error', error: 'boom' });
    expect(s.status()[0]).toMatchObject({ lastStatus: 'error', lastError: 'boom' });
    await s.stop();
  });
});
