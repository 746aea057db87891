import { describe, expect, it } from 'vitest';
import type { RevocationList } from '../auth/revocation.js';
import type { LiveEngine } from '../live/index.js';
import type { Change } from '../storage/changes.js';
import { joinCluster } from './index.js';
import type { ChangeNotice, Cluster } from './types.js';
import { localCluster } from './local.js';

describe('joinCluster', () => {
  it('matches shipped rows in memory like a local commit, re-runs the tables only for a notice without rows', () => {
    let remote: ((tables: readonly string[], n: ChangeNotice) => void) | undefined;
    const base = localCluster();
    const cluster: Cluster = { ...base, changes: { ...base.changes, onRemote: (l) => void (remote = l) } };
    const calls: string[] = [];
    const live = { onCommit: (c: readonly Change[]) => calls.push(`commit:${c.map((x) => x.id)}`), invalidate: (t?: readonly string[]) => calls.push(`rerun:${t}`) } as unknown as LiveEngine;
    const revocations = { onRevoke: () => {}, load: () => {} } as unknown as RevocationList;
    joinCluster(cluster, { onCommit: () => {}, live, revocations, reloadRevocations: async () => {} }, () => {});
    const row: Change = { table: 'events', op: 'insert', id: 'ev_1', before: null, after: { id: 'ev_1' } };
    remote!(['events'], { node: 'b', seq: 1, changes: [{ table: 'events', op: 'insert', ids: ['ev_1'] }], rows: [row] });
    remote!(['events'], { node: 'b', seq: 2, changes: [{ table: 'events', op: 'insert', ids: ['ev_2'] }] });
    expect(calls).toEqual(['commit:ev_1', 'rerun:events']);
  });
});
