/**
 * The primary of `serve --workers N` (docs/reference/scaling.md). It opens the database first
 * (migrations, the one SQLite writer with group commit, cron, push, purges: everything that runs
 * once per server), answers the workers' forwarded requests on a private Unix socket, then
 * forks N workers that accept on the public port. It replaces a worker that dies, reports ready
 * (the workers' `/health`) once all of them accept, and on SIGTERM drains the workers first,
 * then its own writer, and exits 0.
 */
import cluster, { type Worker } from 'node:cluster';
import { randomBytes } from 'node:crypto';
import { chmodSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hubCluster, type Hub, type Peer } from '../cluster/ipc-hub.js';
import { isMessage, type ObservationBatch, type ToPrimary } from '../cluster/ipc-protocol.js';
import { eachObservation } from '../cluster/observations.js';
import type { AppConfig } from '../core/config.js';
import type { Logger } from '../core/logger.js';
import type { Project } from '../define/project.js';
import { framesSocketPath } from '../http/forward.js';
import { createApp, type App } from './app.js';
import { LIVE_MEMORY_SHARE_ENV, PRIMARY_SOCKET_ENV } from './worker.js';

/** A worker that does not exit this long after SIGTERM is killed (its requests had their time). */
const DRAIN_MS = 30_000;

export async function runPrimary(project: Project, config: AppConfig, log: Logger, mode: 'apply' | 'auto', workers: number): Promise<void> {
  // Short and private: Unix socket paths are limited to ~100 bytes, and only this tree may connect.
  const socketPath = join(tmpdir(), `tablebase-${process.pid}-${randomBytes(4).toString('hex')}.sock`);
  let hub: Hub | undefined;
  // Observations may arrive only once the app exists (workers are forked after it).
  const made: { app?: App } = {};
  const observe = (batch: ObservationBatch) => {
    const s = made.app?.services;
    if (!s) return;
    eachObservation(batch, (method, route, status, ms, requestId, ip, at) => {
      s.metrics.record(route, status, ms);
      s.dashboard.observe(method, route, status, ms, requestId, ip, at);
    });
  };
  const app = (made.app = await createApp(project, config, {
    migrate: mode,
    log,
    process: { role: 'primary', socketPath, cluster: (base) => (hub = hubCluster(base, observe, { maxOpen: config.maxStreams, maxPerIp: config.maxStreamsPerIp })) },
  }));
  await app.listen();
  chmodSync(socketPath, 0o600);
  chmodSync(framesSocketPath(socketPath), 0o600);
  const h = hub!;
  // The writer is here, the workers answer /health: a full disk met by a write reaches them at once.
  app.services.health.onDisk((down) => h.announceDisk(down));

  const peers = new Map<Worker, Peer>();
  const accepting = new Set<Worker>();
  let ready = false;
  let stopping = false;
  let port = config.port;
  let deaths: number[] = [];
  // The live memory budget is server-wide; streams live in the workers (./worker.ts).
  const liveShare = Math.max(1, Math.floor(config.maxLiveMemoryBytes / workers));
  const fork = (): Worker => {
    const w = cluster.fork({ [PRIMARY_SOCKET_ENV]: socketPath, [LIVE_MEMORY_SHARE_ENV]: String(liveShare) });
    const peer: Peer = { id: w.id, send: (m) => void (w.isConnected() && w.send(m)) };
    peers.set(w, peer);
    h.join(peer);
    return w;
  };
  cluster.on('message', (w, m) => {
    const peer = peers.get(w);
    if (peer && isMessage(m)) h.receive(peer, m as ToPrimary);
  });
  cluster.on('listening', (w, address) => {
    accepting.add(w);
    if (typeof address.port === 'number' && address.port > 0) port = address.port;
    if (!ready && accepting.size === workers) {
      ready = true;
      h.announce(true);
      log.info({ host: config.host, port, workers, project: config.projectDir, data: config.dataDir }, `Tablebase listening on http://${config.host}:${port} with ${workers} workers`);
    }
  });
  const started = new Promise<void>((resolve, reject) => {
    cluster.on('exit', (w, code, signal) => {
      const peer = peers.get(w);
      if (peer) h.leave(peer);
      peers.delete(w);
      const listened = accepting.delete(w);
      if (stopping) return;
      if (!ready && !listened) {
        // A worker that could not start would fail again: stop the whole start (its error is logged).
        reject(new Error(`a worker exited during start (code ${code ?? signal})`));
        return;
      }
      // At once (a dead worker is replaced within a second), unless workers keep dying: then one a second.
      const now = Date.now();
      deaths = deaths.filter((t) => now - t < 10_000);
      deaths.push(now);
      const delay = deaths.length > 5 ? 1000 : 0;
      log.warn({ worker: w.id, code, signal, delayMs: delay }, 'worker exited; starting a replacement');
      setTimeout(() => stopping || fork(), delay);
    });
    cluster.on('listening', () => ready && resolve());
  });
  for (let i = 0; i < workers; i++) fork();

  // Redis going down or coming back, and the backup failing or recovering (it runs only here),
  // reach the workers' /health within half a second; the hub sends only changes.
  let redis = h.redis();
  const watch = setInterval(() => {
    if (h.redis() !== redis) {
      redis = h.redis();
      h.announce(ready);
    }
    if (app.backup) h.announceBackup(app.backup.status().failing);
    // Nothing calls the primary's /health: it probes its disk itself while marked down (a commit
    // also clears it), and the workers hear when it takes writes again.
    if (app.services.health.diskDown) void app.services.health.check();
  }, 500).unref();

  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    clearInterval(watch);
    log.info({ signal }, 'shutting down');
    const alive = [...peers.keys()].filter((w) => !w.isDead());
    const exited = alive.map((w) => new Promise<void>((r) => (w.isDead() ? r() : w.once('exit', () => r()))));
    for (const w of alive) w.process.kill('SIGTERM');
    const force = setTimeout(() => alive.forEach((w) => w.isDead() || w.process.kill('SIGKILL')), DRAIN_MS);
    await Promise.all(exited);
    clearTimeout(force);
    // Workers are gone: their forwarded writes were answered; now the queued ones commit.
    await app.close();
    rmSync(socketPath, { force: true });
    rmSync(framesSocketPath(socketPath), { force: true });
  };
  const exitAfter = (signal: string) =>
    void stop(signal).then(
      () => process.exit(0),
      (err) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  process.on('SIGTERM', () => exitAfter('SIGTERM'));
  process.on('SIGINT', () => exitAfter('SIGINT'));
  try {
    await started;
  } catch (err) {
    await stop('start failed').catch(() => {});
    throw err;
  }
}
