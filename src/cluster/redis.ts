/**
 * The Redis side of a deployment (issue #15, docs/reference/scaling.md), with ioredis. Two connections: commands
 * (rate-limit script, cron claims, publishes) and a subscriber. Keys and channels start with the
 * deployment's prefix (`REDIS_PREFIX`, default `tablebase:<database name>:`).
 *
 * When Redis goes away the node keeps serving: commands fail fast (no offline queue), rate limits
 * fall back to this node's memory, cron runs locally, and missed change notices are made up for
 * by re-running every live query once the subscriber is back (and on any sequence gap).
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { RevokedSession } from '../auth/revocation.js';
import { MemoryRateLimitStore, RedisRateLimitStore } from '../ratelimit/index.js';
import type { NormalizedPolicy } from '../ratelimit/policy.js';
import type { HitResult, RateLimitStore } from '../ratelimit/store.js';
import type { Change } from '../storage/changes.js';
import type { ChangeNotice, Cluster } from './types.js';

export interface RedisClusterOptions {
  url: string;
  prefix: string;
  /** Reports problems (a lost connection, a malformed notice); the server logs them. */
  warn?: (msg: string, err?: unknown) => void;
  /** Whether change notices carry the rows (default true); false: ids only. */
  changeRows?: boolean;
  /** How long the first connection may take before start fails (default 5 s). */
  connectTimeoutMs?: number;
}

/** `host:port` of a Redis URL, without credentials. */
export function describeRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '6379'}`;
  } catch {
    return 'an unparseable URL';
  }
}

function client(url: string): Redis {
  return new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    // Keep trying, at most once a second: Redis coming back must be noticed quickly.
    retryStrategy: (attempt) => Math.min(attempt * 100, 1000),
  });
}

/**
 * Past this many bytes of JSON a notice goes without its rows, and receivers re-run the queries
 * of the tables named (a bulk write: one re-run per query beats matching thousands of rows).
 */
export const MAX_NOTICE_ROW_BYTES = 256 * 1024;

/**
 * One commit batch as it crosses Redis: grouped by table and operation, with the rows' before
 * and after images so receivers match them in memory like a local commit (issue #24). The
 * images hold every column, private ones too: Redis is inside the deployment's trust boundary
 * (docs/reference/scaling.md says who can read the channel).
 */
export function encodeNotice(node: string, seq: number, changes: readonly Change[], maxRowBytes = MAX_NOTICE_ROW_BYTES): string {
  const ids = noticeOf(node, seq, changes);
  if (maxRowBytes <= 0) return JSON.stringify(ids);
  const text = JSON.stringify({ ...ids, rows: changes });
  return text.length <= maxRowBytes ? text : JSON.stringify(ids);
}

/** Groups one commit batch by table and operation: ids only. */
export function noticeOf(node: string, seq: number, changes: readonly Change[]): ChangeNotice {
  const groups = new Map<string, { table: string; op: Change['op']; ids: string[] }>();
  for (const c of changes) {
    const key = `${c.table}\u0000${c.op}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { table: c.table, op: c.op, ids: [] }));
    g.ids.push(c.id);
  }
  return { node, seq, changes: [...groups.values()] };
}

/** Per-sender sequence tracking: true when a notice shows that earlier ones were missed. */
export class GapDetector {
  #last = new Map<string, number>();
  seen(node: string, seq: number): boolean {
    const last = this.#last.get(node);
    this.#last.set(node, seq);
    return last !== undefined && seq !== last + 1;
  }
  reset(): void {
    this.#last.clear();
  }
}

/** Rate limits in Redis while it answers, in this node's memory while it does not (docs/reference/scaling.md). */
class FallbackStore implements RateLimitStore<Promise<HitResult>> {
  #redis: RedisRateLimitStore;
  #memory = new MemoryRateLimitStore();
  #up: () => boolean;
  constructor(redis: RedisRateLimitStore, up: () => boolean) {
    this.#redis = redis;
    this.#up = up;
  }
  async hit(key: string, policy: NormalizedPolicy, now: number): Promise<HitResult> {
    if (this.#up()) {
      try {
        return await this.#redis.hit(key, policy, now);
      } catch {
        /* fell over mid-request: count it here */
      }
    }
    return this.#memory.hit(key, policy, now);
  }
}

export async function redisCluster(o: RedisClusterOptions): Promise<Cluster> {
  const node = randomBytes(6).toString('hex');
  const warn = o.warn ?? (() => {});
  const cmd = client(o.url);
  const sub = client(o.url);
  const where = describeRedisUrl(o.url);
  for (const c of [cmd, sub]) c.on('error', () => {}); // reported through 'close' below, once per outage
  try {
    const timeout = o.connectTimeoutMs ?? 5000;
    await Promise.race([Promise.all([cmd.connect(), sub.connect()]), new Promise((_, reject) => setTimeout(() => reject(new Error(`no answer within ${timeout} ms`)), timeout).unref())]);
  } catch (err) {
    cmd.disconnect();
    sub.disconnect();
    throw new Error(`cannot connect to Redis at ${where}: ${(err as Error).message}`);
  }
  const channel = { changes: `${o.prefix}changes`, revocations: `${o.prefix}revocations` };
  const up = () => cmd.status === 'ready';
  const remoteChanges: ((tables: readonly string[], n: ChangeNotice) => void)[] = [];
  const gaps: (() => void)[] = [];
  const remoteRevocations: ((e: readonly RevokedSession[] | null) => void)[] = [];
  const detector = new GapDetector();
  let seq = 0;
  let readyBefore = false;

  sub.on('ready', () => {
    // Every subscription is re-made by ioredis on reconnect; what was published meanwhile is lost.
    if (readyBefore) {
      detector.reset();
      for (const g of gaps) g();
      for (const l of remoteRevocations) l(null);
    }
    readyBefore = true;
  });
  let down = false;
  cmd.on('close', () => {
    if (!down) warn(`Redis at ${where} is unreachable: rate limits are per node and cron runs locally until it returns`);
    down = true;
  });
  cmd.on('ready', () => (down = false));
  sub.on('message', (ch: string, text: string) => {
    try {
      const msg = JSON.parse(text) as { node: string };
      if (msg.node === node) return;
      if (ch === channel.changes) {
        const n = msg as ChangeNotice;
        if (detector.seen(n.node, n.seq)) for (const g of gaps) g();
        else {
          const tables = [...new Set(n.changes.map((c) => c.table))];
          for (const l of remoteChanges) l(tables, n);
        }
      } else if (ch === channel.revocations) {
        const entries = (msg as unknown as { entries: RevokedSession[] }).entries;
        for (const l of remoteRevocations) l(entries);
      }
    } catch (err) {
      warn('ignored a malformed message on the change bus', err);
    }
  });
  await sub.subscribe(channel.changes, channel.revocations);

  const publish = (ch: string, payload: object) => {
    // Fails fast while Redis is down; receivers notice the sequence gap and re-run.
    if (up()) cmd.publish(ch, JSON.stringify(payload)).catch(() => {});
  };
  return {
    node,
    changes: {
      publish: (changes) => {
        if (up()) cmd.publish(channel.changes, encodeNotice(node, ++seq, changes, o.changeRows === false ? 0 : MAX_NOTICE_ROW_BYTES)).catch(() => {});
        else seq++; // receivers see the gap and re-run
      },
      onRemote: (l) => void remoteChanges.push(l),
      onGap: (l) => void gaps.push(l),
    },
    revocations: {
      publish: (entries) => publish(channel.revocations, { node, entries }),
      onRemote: (l) => void remoteRevocations.push(l),
    },
    rateLimitStore: new FallbackStore(new RedisRateLimitStore(cmd, { prefix: `${o.prefix}rl:` }), up),
    cron: {
      claim: async (job, tickMs) => {
        if (!up()) return true;
        try {
          // First node to claim (job, tick) runs it; the key outlives any clock skew between nodes.
          return (await cmd.set(`${o.prefix}cron:${job}:${tickMs}`, node, 'PX', 3_600_000, 'NX')) === 'OK';
        } catch {
          return true;
        }
      },
    },
    redis: () => (up() ? 'up' : 'down'),
    close: async () => {
      sub.disconnect();
      cmd.disconnect();
    },
  };
}
