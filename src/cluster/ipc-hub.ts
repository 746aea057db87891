/**
 * The primary's side of `serve --workers` (docs/reference/scaling.md). It wraps this deployment's
 * cluster (in-process, or Redis across nodes) and joins the workers to it: committed changes and
 * revocations made by any process reach every other process (and other nodes through the base),
 * rate-limit hits from workers are counted in the base's one store, and the workers' answered
 * requests are handed to the primary's metrics, request log and history.
 */
import type { RevokedSession } from '../auth/revocation.js';
import type { Change } from '../storage/changes.js';
import type { LiveFigures, ObservationBatch, ToPrimary, ToWorker } from './ipc-protocol.js';
import type { ChangeNotice, Cluster } from './types.js';

export interface Peer {
  readonly id: number;
  send(message: ToWorker): void;
}

export interface Hub extends Cluster {
  /** A message from worker `from`. */
  receive(from: Peer, message: ToPrimary): void;
  join(peer: Peer): void;
  leave(peer: Peer): void;
  /** Every worker hands over what it recorded; resolves with their live figures (a dead worker is skipped after 1 s). */
  gather(): Promise<LiveFigures[]>;
  /** Tells every worker whether all accept requests (their `/health`). */
  announce(ready: boolean): void;
  /**
   * Tells every worker whether the primary's backup is failing (docs/reference/backups.md), so
   * their `/health` says so without asking the primary on every call.
   */
  announceBackup(failing: boolean): void;
  /**
   * Tells every worker whether the primary's writes meet a full disk (core/health-state.ts): the
   * workers answer `/health`, the writer is here, and a worker's `/health` must not say 200 while
   * every forwarded write is 503.
   */
  announceDisk(full: boolean): void;
}

export interface StreamLimits {
  readonly maxOpen: number;
  readonly maxPerIp: number;
}

export function hubCluster(base: Cluster, onObservations: (batch: ObservationBatch) => void, limits: StreamLimits): Hub {
  const peers = new Map<number, Peer>();
  const changeListeners: ((tables: readonly string[], n: ChangeNotice) => void)[] = [];
  const revocationListeners: ((e: readonly RevokedSession[] | null) => void)[] = [];
  const gathering = new Map<number, { left: Set<number>; figures: LiveFigures[]; done: () => void }>();
  let gatherId = 0;
  // Streams open on the workers, for the server-wide caps: in all, per IP, and per worker and IP
  // (what a dead worker's streams gave back).
  let streamsOpen = 0;
  const streamsPerIp = new Map<string, number>();
  const streamsOf = new Map<number, Map<string, number>>();
  const addStream = (peer: number, ip: string, n: number) => {
    streamsOpen += n;
    const total = (streamsPerIp.get(ip) ?? 0) + n;
    if (total > 0) streamsPerIp.set(ip, total);
    else streamsPerIp.delete(ip);
    let mine = streamsOf.get(peer);
    if (!mine) streamsOf.set(peer, (mine = new Map()));
    const own = (mine.get(ip) ?? 0) + n;
    if (own > 0) mine.set(ip, own);
    else mine.delete(ip);
  };
  let ready = false;
  /** What the primary tells every worker for its `/health` (each flag announced when it changes). */
  const flags = { backupFailing: false, diskFull: false };
  const state = (): ToWorker => ({ t: 'state', ready, redis: base.redis(), ...flags });
  const broadcast = (m: ToWorker, except?: number) => {
    for (const p of peers.values()) if (p.id !== except) p.send(m);
  };
  const setFlag = (flag: keyof typeof flags, on: boolean) => {
    if (flags[flag] === on) return;
    flags[flag] = on;
    broadcast(state());
  };
  // Workers with live queries open: the only ones changes are worth serializing for.
  const watching = new Set<number>();
  const toWatchers = (m: ToWorker, except?: number) => {
    for (const id of watching) if (id !== except) peers.get(id)?.send(m);
  };
  const tablesOf = (changes: readonly Change[]) => [...new Set(changes.map((c) => c.table))];
  const local = (changes: readonly Change[]) => {
    const n: ChangeNotice = { node: base.node, seq: 0, changes: [], rows: changes };
    for (const l of changeListeners) l(tablesOf(changes), n);
  };

  // Other nodes (Redis): to every worker, with the rows when the notice carried them.
  base.changes.onRemote((tables, n) => toWatchers(n.rows ? { t: 'changes', changes: n.rows } : { t: 'tables', tables }));
  base.changes.onGap(() => broadcast({ t: 'gap' }));
  base.revocations.onRemote((entries) => broadcast({ t: 'revoke', entries }));

  const finishGather = (id: number, peer: number, figures?: LiveFigures) => {
    const g = gathering.get(id);
    if (!g || !g.left.delete(peer)) return;
    if (figures) g.figures.push(figures);
    if (g.left.size === 0) g.done();
  };

  return {
    node: base.node,
    changes: {
      // The primary's own commits (SQLite: every write of the server).
      publish: (changes) => {
        toWatchers({ t: 'changes', changes });
        base.changes.publish(changes);
      },
      onRemote: (l) => {
        changeListeners.push(l);
        base.changes.onRemote(l);
      },
      onGap: (l) => base.changes.onGap(l),
    },
    revocations: {
      publish: (entries) => {
        broadcast({ t: 'revoke', entries });
        base.revocations.publish(entries);
      },
      onRemote: (l) => {
        revocationListeners.push(l);
        base.revocations.onRemote(l);
      },
    },
    rateLimitStore: base.rateLimitStore,
    cron: base.cron,
    redis: () => base.redis(),
    close: () => base.close(),
    receive(from, m) {
      switch (m.t) {
        case 'rl':
          void Promise.resolve(base.rateLimitStore.hit(m.key, m.policy, m.now)).then((result) => from.send({ t: 'rl', id: m.id, result }));
          return;
        case 'changes':
          // A worker's own commit (PostgreSQL): the other workers, this process, other nodes.
          toWatchers({ t: 'changes', changes: m.changes }, from.id);
          local(m.changes);
          base.changes.publish(m.changes);
          return;
        case 'revoke':
          broadcast({ t: 'revoke', entries: m.entries }, from.id);
          for (const l of revocationListeners) l(m.entries);
          base.revocations.publish(m.entries);
          return;
        case 'obs':
          onObservations(m);
          return;
        case 'stream': {
          const ok = streamsOpen < limits.maxOpen && (streamsPerIp.get(m.ip) ?? 0) < limits.maxPerIp;
          if (ok) addStream(from.id, m.ip, 1);
          from.send({ t: 'stream', id: m.id, ok });
          return;
        }
        case 'unstream':
          if (streamsOf.get(from.id)?.get(m.ip)) addStream(from.id, m.ip, -1);
          return;
        case 'watch':
          if (!m.on) watching.delete(from.id);
          else if (peers.has(from.id)) {
            watching.add(from.id);
            // Commits between the worker's first query and now were not sent to it: it re-runs.
            from.send({ t: 'gap' });
          }
          return;
        case 'gathered':
          finishGather(m.id, from.id, m.live);
          return;
      }
    },
    join(peer) {
      peers.set(peer.id, peer);
      peer.send(state());
    },
    leave(peer) {
      peers.delete(peer.id);
      watching.delete(peer.id);
      for (const [ip, n] of streamsOf.get(peer.id) ?? []) addStream(peer.id, ip, -n);
      streamsOf.delete(peer.id);
      for (const id of gathering.keys()) finishGather(id, peer.id);
    },
    gather() {
      const id = ++gatherId;
      return new Promise<LiveFigures[]>((resolve) => {
        const g = { left: new Set(peers.keys()), figures: [] as LiveFigures[], done: () => {} };
        const timer = setTimeout(() => g.done(), 1000);
        g.done = () => {
          clearTimeout(timer);
          gathering.delete(id);
          resolve(g.figures);
        };
        gathering.set(id, g);
        if (g.left.size === 0) return g.done();
        broadcast({ t: 'gather', id });
      });
    },
    announce(now) {
      ready = now;
      broadcast(state());
    },
    announceBackup: (failing) => setFlag('backupFailing', failing),
    announceDisk: (full) => setFlag('diskFull', full),
  };
}
