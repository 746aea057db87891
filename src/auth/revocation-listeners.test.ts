import { describe, expect, it } from 'vitest';
import { RevocationList, type RevokedSession } from './revocation.js';

describe('RevocationList.onRevoke (shared with other nodes, issue #15)', () => {
  it('reports revocations made here, not those loaded from storage or other nodes', () => {
    const list = new RevocationList(900, () => 1_000_000);
    const told: RevokedSession[] = [];
    list.onRevoke((e) => told.push(e));
    list.revoke('s1', 999_000);
    list.load([{ sessionId: 's2', revokedAt: 999_500 }]);
    expect(told).toEqual([{ sessionId: 's1', revokedAt: 999_000 }]);
    expect(list.isRevoked('s1') && list.isRevoked('s2')).toBe(true);
  });
});
