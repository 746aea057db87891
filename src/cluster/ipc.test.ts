import { describe, expect, it } from 'vitest';
import type { Change } from '../storage/changes.js';
import { hubCluster, type Peer } from './ipc-hub.js';
import type { Observation, ToPrimary, ToWorker } from './ipc-protocol.js';
import { workerCluster, type WorkerCluster } from './ipc-worker.js';
import type { LiveEngine, LiveQuery, Subscriber } from '../live/types.js';
import { localCluster } from './local.js';
import { eachObservation } from './observations.js';
import type { ChangeNotice } from './types.js';

/** A primary and two workers joined by in-memory channels that deliver asynchronously, like IPC. */
function server(limits = { maxOpen: 100, maxPerIp: 2 }) {
  const observed: Observation[] = [];
  const hub = hubCluster(localCluster(), (batch) => eachObservation(batch, (...o) => observed.push(o)), limits);
  const workers = [1, 2].map((id) => {
    const listeners: ((m: ToWorker) => void)[] = [];
    const peer: Peer = { id, send: (m) => queueMicrotask(() => listeners.forEach((l) => l(m))) };
    const w = workerCluster({ send: (m: ToPrimary) => queueMicrotask(() => hub.receive(peer, m)), onMessage: (l) => void listeners.push(l) });
    hub.join(peer);
    return { w, peer };
  });
  return { hub, observed, w1: workers[0]!.w, w2: workers[1]!.w, peer1: workers[0]!.peer };
}

/** A live engine that only counts what it is told; `watched` wraps it as a worker's app does. */
function stubEngine() {
  const told = { gaps: 0, subscribed: 0 };
  const engine: LiveEngine = {
    subscribe: () => (told.subscribed++, () => void told.subscribed--),
    admit: () => () => {},
    onCommit: () => {},
    invalidate: () => void told.gaps++,
    version: 0,
    stats: () => ({}) as ReturnType<LiveEngine['stats']>,
    close: () => {},
  };
  return { engine, told };
}
const openQuery = (w: WorkerCluster) => w.watched(stubEngine().engine).subscribe({} as LiveQuery, {} as Subscriber, '1.2.3.4');

const change: Change = { table: 'events', op: 'update', id: 'ev_1', before: { id: 'ev_1', t: 'a' }, after: { id: 'ev_1', t: 'b' } };
const tick = () => new Promise((r) => setTimeout(r, 5));

describe('workers sharing one server through the primary', () => {
  it('count rate limits in one store: exact across workers', async () => {
    const { w1, w2 } = server();
    const policy = { maxRequests: 3, windowMs: 60_000 };
    const now = Date.now();
    const allowed = [];
    for (const w of [w1, w2, w1, w2]) allowed.push((await w.rateLimitStore.hit('k', policy, now)).allowed);
    expect(allowed).toEqual([true, true, true, false]);
  });

  it('relay a worker’s committed rows to the other worker and the primary, not back to the sender', async () => {
    const { hub, w1, w2 } = server();
    const got: Record<string, ChangeNotice[]> = { w1: [], w2: [], primary: [] };
    w1.changes.onRemote((_t, n) => got.w1!.push(n));
    w2.changes.onRemote((_t, n) => got.w2!.push(n));
    hub.changes.onRemote((_t, n) => got.primary!.push(n));
    openQuery(w1);
    openQuery(w2);
    await tick();
    w1.changes.publish([change]);
    await tick();
    expect(got.w1).toEqual([]);
    expect(got.w2!.map((n) => n.rows)).toEqual([[change]]);
    expect(got.primary!.map((n) => n.rows)).toEqual([[change]]);
    hub.changes.publish([change]); // the primary's own commit (SQLite)
    await tick();
    expect(got.w1!.length + got.w2!.length).toBe(3);
  });

  it('send changes only to a worker with live queries open, and a gap when its first one opens', async () => {
    const { hub, w1 } = server();
    const got: ChangeNotice[] = [];
    let gaps = 0;
    w1.changes.onRemote((_t, n) => got.push(n));
    w1.changes.onGap(() => gaps++);
    hub.changes.publish([change]);
    await tick();
    expect(got).toEqual([]);
    const { engine } = stubEngine();
    const live = w1.watched(engine);
    const close = live.subscribe({} as LiveQuery, {} as Subscriber, '1.2.3.4');
    const close2 = live.subscribe({} as LiveQuery, {} as Subscriber, '1.2.3.4');
    await tick();
    expect(gaps).toBe(1); // whatever committed before the primary heard is re-read
    hub.changes.publish([change]);
    await tick();
    expect(got.length).toBe(1);
    close();
    close();
    hub.changes.publish([change]);
    await tick();
    expect(got.length).toBe(2); // one query is still open
    close2();
    await tick();
    hub.changes.publish([change]);
    await tick();
    expect(got.length).toBe(2);
  });

  it('relay revocations to every other process', async () => {
    const { hub, w1, w2 } = server();
    const seen: string[] = [];
    w2.revocations.onRemote((e) => seen.push(`w2:${e?.[0]?.sessionId}`));
    hub.revocations.onRemote((e) => seen.push(`primary:${e?.[0]?.sessionId}`));
    w1.revocations.publish([{ sessionId: 's1', revokedAt: 1 }]);
    await tick();
    expect(seen.sort()).toEqual(['primary:s1', 'w2:s1']);
  });

  it('gather every worker’s observations before a server-wide read: each request once', async () => {
    const { hub, observed, w1, w2 } = server();
    for (let i = 0; i < 3; i++) w1.observe(['GET', 'GET /db', 200, 1, `a${i}`, '1.2.3.4', 0]);
    for (let i = 0; i < 2; i++) w2.observe(['GET', 'GET /db', 200, 1, `b${i}`, '1.2.3.4', 0]);
    const figures = await hub.gather();
    expect(observed.map((o) => o[4]).sort()).toEqual(['a0', 'a1', 'a2', 'b0', 'b1']);
    expect(figures).toHaveLength(2);
    await hub.gather();
    expect(observed).toHaveLength(5);
  });

  it('cap streams server-wide, and free a dead worker’s places', async () => {
    const { hub, w1, w2, peer1 } = server({ maxOpen: 100, maxPerIp: 2 });
    const r1 = await w1.streams.acquire('ip');
    const r2 = await w2.streams.acquire('ip');
    expect(r1).toBeTypeOf('function');
    expect(r2).toBeTypeOf('function');
    expect(await w2.streams.acquire('ip')).toBeNull();
    r2!();
    r2!(); // a second release gives nothing back twice
    expect(await w2.streams.acquire('ip')).toBeTypeOf('function');
    expect(await w2.streams.acquire('ip')).toBeNull();
    hub.leave(peer1); // worker 1 died with its stream
    expect(await w2.streams.acquire('ip')).toBeTypeOf('function');
  });

  it('report ready to the workers’ health once announced', async () => {
    const { hub, w1 } = server();
    await tick();
    expect(w1.ready()).toBe(false);
    hub.announce(true);
    await tick();
    expect(w1.ready()).toBe(true);
  });

  it('tell the workers’ health that the primary’s backup fails, and that it recovered; a worker joining later hears it too', async () => {
    const { hub, w1, w2 } = server();
    await tick();
    expect(w1.backupFailing()).toBe(false);
    hub.announceBackup(true);
    await tick();
    expect([w1.backupFailing(), w2.backupFailing()]).toEqual([true, true]);
    hub.announce(true); // a readiness announcement keeps the backup state
    await tick();
    expect(w1.backupFailing()).toBe(true);
    const listeners: ((m: ToWorker) => void)[] = [];
    const late = workerCluster({ send: () => {}, onMessage: (l) => void listeners.push(l) });
    hub.join({ id: 3, send: (m) => queueMicrotask(() => listeners.forEach((l) => l(m))) });
    await tick();
    expect(late.backupFailing()).toBe(true);
    hub.announceBackup(false);
    await tick();
    expect([w1.backupFailing(), w2.backupFailing(), late.backupFailing()]).toEqual([false, false, false]);
  });

  it('tell the workers’ health that the primary’s writes meet a full disk, and that it takes writes again', async () => {
    const { hub, w1, w2 } = server();
    await tick();
    expect(w1.diskFull()).toBe(false);
    hub.announceDisk(true);
    await tick();
    expect([w1.diskFull(), w2.diskFull()]).toEqual([true, true]);
    hub.announce(true); // a readiness announcement keeps the disk state
    hub.announceBackup(true);
    await tick();
    expect([w1.diskFull(), w1.backupFailing()]).toEqual([true, true]);
    hub.announceDisk(false);
    await tick();
    expect([w1.diskFull(), w2.diskFull(), w1.backupFailing()]).toEqual([false, false, true]);
  });
});
