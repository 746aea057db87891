/**
 * A worker's side of `serve --workers` (docs/reference/scaling.md): the same `Cluster` the Redis
 * and in-process implementations give, answered by the primary over IPC. The primary holds the
 * one rate-limit store (exact sliding windows for the whole server), relays committed changes
 * with their rows (matched here in memory like a local commit), relays revocations, and runs cron.
 */
import { randomBytes } from 'node:crypto';
import type { RevokedSession } from '../auth/revocation.js';
import type { NormalizedPolicy } from '../ratelimit/policy.js';
import type { HitResult, RateLimitStore } from '../ratelimit/store.js';
import type { LiveEngine } from '../live/types.js';
import type { Change } from '../storage/changes.js';
import type { Channel, LiveFigures, Observation, ToPrimary, ToWorker } from './ipc-protocol.js';
import { ObservationEncoder } from './observations.js';
import type { ChangeNotice, Cluster, StreamCaps } from './types.js';

/** Asks the primary's store: one message each way per rate-limited request (never for a null policy). */
class IpcRateLimitStore implements RateLimitStore<Promise<HitResult>> {
  #next = 0;
  readonly waiting = new Map<number, (r: HitResult) => void>();
  #send: (m: ToPrimary) => void;
  constructor(send: (m: ToPrimary) => void) {
    this.#send = send;
  }
  hit(key: string, policy: NormalizedPolicy, now: number): Promise<HitResult> {
    const id = ++this.#next;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.#send({ t: 'rl', id, key, policy: { maxRequests: policy.maxRequests, windowMs: policy.windowMs }, now });
    });
  }
}

export interface WorkerCluster extends Cluster {
  /** True once the primary says every worker accepts requests (`/health`). */
  ready(): boolean;
  /** True while the primary says its backup is failing (`/health`, docs/reference/backups.md). */
  backupFailing(): boolean;
  /** True while the primary says its writes meet a full disk (`/health`, core/health-state.ts). */
  diskFull(): boolean;
  /** Hands an answered request to the primary's figures (batched; see `flush`). */
  observe(o: Observation): void;
  /** Stream caps counted by the primary for the whole server. */
  readonly streams: StreamCaps;
  /** This worker's live figures, answered when the primary gathers. */
  setLiveFigures(read: () => LiveFigures): void;
  /**
   * `engine` as it must be used in a worker: it tells the primary when its first query opens
   * and its last one closes, so committed changes are sent here only while something listens.
   */
  watched(engine: LiveEngine): LiveEngine;
}

/** Observations wait at most this long, or this many, before going to the primary in one message. */
const FLUSH_MS = 200;
const FLUSH_AT = 512;

export function workerCluster(channel: Channel<ToPrimary, ToWorker>): WorkerCluster {
  const node = randomBytes(6).toString('hex');
  const changeListeners: ((tables: readonly string[], n: ChangeNotice) => void)[] = [];
  const gapListeners: (() => void)[] = [];
  const revocationListeners: ((e: readonly RevokedSession[] | null) => void)[] = [];
  const store = new IpcRateLimitStore((m) => channel.send(m));
  // The primary's last `state` message (what a worker's /health reports), as it was sent.
  let state: Omit<Extract<ToWorker, { t: 'state' }>, 't'> = { ready: false, redis: undefined };
  let live: () => LiveFigures = () => ({ open: 0, queries: 0, streams: [] });
  const observed = new ObservationEncoder();
  let streamAsk = 0;
  const streamAnswers = new Map<number, (ok: boolean) => void>();
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (observed.size === 0) return;
    channel.send({ t: 'obs', ...observed.take() });
  };
  const rows = (changes: readonly Change[]): ChangeNotice => ({ node: 'primary', seq: 0, changes: [], rows: changes });
  channel.onMessage((m) => {
    switch (m.t) {
      case 'rl': {
        const resolve = store.waiting.get(m.id);
        store.waiting.delete(m.id);
        resolve?.(m.result);
        return;
      }
      case 'changes': {
        const tables = [...new Set(m.changes.map((c) => c.table))];
        for (const l of changeListeners) l(tables, rows(m.changes));
        return;
      }
      case 'tables':
        for (const l of changeListeners) l(m.tables, { node: 'remote', seq: 0, changes: [] });
        return;
      case 'gap':
        for (const l of gapListeners) l();
        return;
      case 'revoke':
        for (const l of revocationListeners) l(m.entries);
        return;
      case 'stream': {
        const answer = streamAnswers.get(m.id);
        streamAnswers.delete(m.id);
        answer?.(m.ok);
        return;
      }
      case 'gather':
        // Everything recorded so far reaches the primary before its answer: each request counted once.
        flush();
        channel.send({ t: 'gathered', id: m.id, live: live() });
        return;
      case 'state':
        state = m;
        return;
    }
  });
  return {
    node,
    changes: {
      publish: (changes) => channel.send({ t: 'changes', changes }),
      onRemote: (l) => void changeListeners.push(l),
      onGap: (l) => void gapListeners.push(l),
    },
    revocations: {
      publish: (entries) => channel.send({ t: 'revoke', entries }),
      onRemote: (l) => void revocationListeners.push(l),
    },
    rateLimitStore: store,
    // Cron runs in the primary only: once per tick for the whole server.
    cron: { claim: async () => false },
    redis: () => state.redis,
    ready: () => state.ready,
    backupFailing: () => state.backupFailing === true,
    diskFull: () => state.diskFull === true,
    observe(o) {
      observed.add(o);
      if (observed.size >= FLUSH_AT) flush();
      else timer ??= setTimeout(flush, FLUSH_MS).unref();
    },
    streams: {
      acquire: (ip) =>
        new Promise((resolve) => {
          const id = ++streamAsk;
          streamAnswers.set(id, (ok) => {
            let released = false;
            resolve(ok ? () => void (released || ((released = true), channel.send({ t: 'unstream', ip }))) : null);
          });
          channel.send({ t: 'stream', id, ip });
        }),
    },
    setLiveFigures(read) {
      live = read;
    },
    watched(engine) {
      let open = 0;
      return {
        subscribe(q, subscriber, ip) {
          const unsubscribe = engine.subscribe(q, subscriber, ip);
          if (++open === 1) channel.send({ t: 'watch', on: true });
          let done = false;
          return () => {
            if (done) return;
            done = true;
            unsubscribe();
            if (--open === 0) channel.send({ t: 'watch', on: false });
          };
        },
        admit: (q) => engine.admit(q),
        onCommit: (changes) => engine.onCommit(changes),
        invalidate: (tables) => engine.invalidate(tables),
        get version() {
          return engine.version;
        },
        stats: () => engine.stats(),
        close: () => engine.close(),
      };
    },
    close: async () => flush(),
  };
}
