import { describe, expect, it } from 'vitest';
import { HealthState } from './health-state.js';

describe('HealthState', () => {
  it('tells its disk listener once when the disk goes down and once when it takes writes again (a commit or a probe)', async () => {
    let writable = false;
    const h = new HealthState({ probeDisk: async () => writable });
    const heard: boolean[] = [];
    h.onDisk((down) => heard.push(down));
    h.fail('disk');
    h.fail('disk');
    h.fail('database'); // not the disk: not told
    expect(h.diskDown).toBe(true);
    expect(await h.check()).toEqual(['disk', 'database']); // the probe fails: still down
    h.wrote();
    expect(h.diskDown).toBe(false);
    h.fail('disk');
    writable = true;
    expect(await h.check()).toEqual(['database']);
    expect(heard).toEqual([true, false, true, false]);
  });
});
