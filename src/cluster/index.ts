/**
 * Opening what a deployment shares and wiring it to this node's services: a few calls from the
 * composition root (issue #15). Without `--redis`, everything stays in process.
 */
import type { RevocationList } from '../auth/revocation.js';
import type { LiveEngine } from '../live/index.js';
import type { CommitListener } from '../storage/changes.js';
import { localCluster } from './local.js';
import type { Cluster } from './types.js';

export type { Cluster, ChangeBus, ChangeNotice, CronLeader, RevocationBus } from './types.js';

export interface ClusterConfig {
  readonly redisUrl: string | undefined;
  readonly redisPrefix: string | undefined;
  /** False: notices carry ids only (REDIS_CHANGE_ROWS=off). */
  readonly redisChangeRows?: boolean;
}

/** `tablebase:<database name>:` unless REDIS_PREFIX says otherwise (docs/reference/scaling.md). */
export function defaultPrefix(databaseName: string): string {
  return `tablebase:${databaseName}:`;
}

export async function openCluster(config: ClusterConfig, databaseName: string, warn: (msg: string, err?: unknown) => void): Promise<Cluster> {
  if (!config.redisUrl) return localCluster();
  // ioredis is loaded only with --redis (issue #25).
  const { redisCluster } = await import('./redis.js');
  return redisCluster({ url: config.redisUrl, prefix: config.redisPrefix ?? defaultPrefix(databaseName), warn, changeRows: config.redisChangeRows ?? true });
}

/** Connects this node's writer, live engine and revocation list to the rest of the deployment. */
export function joinCluster(
  cluster: Cluster,
  node: { onCommit(l: CommitListener): void; live: LiveEngine; revocations: RevocationList; reloadRevocations(): Promise<unknown> },
  warn: (msg: string, err?: unknown) => void,
): void {
  node.onCommit((changes) => cluster.changes.publish(changes));
  // Shipped rows are matched like a local commit: one indexed lookup per change, no query re-run.
  cluster.changes.onRemote((tables, notice) => (notice.rows ? node.live.onCommit(notice.rows) : node.live.invalidate(tables)));
  cluster.changes.onGap(() => node.live.invalidate());
  node.revocations.onRevoke((entry) => cluster.revocations.publish([entry]));
  cluster.revocations.onRemote((entries) => {
    if (entries) node.revocations.load(entries);
    else node.reloadRevocations().catch((err) => warn('revocation reload failed', err));
  });
}
