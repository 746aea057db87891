/**
 * One process, nothing to share: commits reach the local live engine through the writer's own
 * listener, revocations are already in the one in-memory list, counters live in memory and every
 * cron tick is this node's.
 */
import { randomBytes } from 'node:crypto';
import { MemoryRateLimitStore } from '../ratelimit/index.js';
import type { Cluster } from './types.js';

export function localCluster(): Cluster {
  return {
    node: randomBytes(6).toString('hex'),
    changes: { publish: () => {}, onRemote: () => {}, onGap: () => {} },
    revocations: { publish: () => {}, onRemote: () => {} },
    rateLimitStore: new MemoryRateLimitStore(),
    cron: { claim: async () => true },
    redis: () => undefined,
    close: async () => {},
  };
}
