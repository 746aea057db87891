/**
 * Stream routes vs `/db/live` (docs/live.md), one run, each transport on a fresh server process
 * so RSS deltas do not share a heap: N stream-count subscriptions either as N stream routes (one
 * HTTP/1.1 connection each) or over N / PER_SOCKET WebSockets. Every `ROOM_SIZE` subscriptions
 * watch one room; each probe write lands in a random room and must reach all of its watchers.
 *
 * Printed per transport: delivery p50/p99 (write sent → payload read), server CPU per delivered
 * event (from /proc, so a neighbour's load does not count), RSS per subscription (RSS after
 * opening minus before, over N). Targets (issue #23): per subscription at most half the memory of
 * a stream route, and CPU per event no higher.
 *
 * Knobs: LIVE_T_SUBS (10000), LIVE_T_PER_SOCKET (100), LIVE_T_ROOM (100), LIVE_T_WRITES (100).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { cpuSeconds, startProcess, type Started } from './lib.js';
import { pct } from './live-report.js';
import { WireStream } from './live-wire.js';

const SUBS = Number(process.env.LIVE_T_SUBS ?? 10_000);
const PER_SOCKET = Number(process.env.LIVE_T_PER_SOCKET ?? 100);
const ROOM = Number(process.env.LIVE_T_ROOM ?? 100);
const WRITES = Number(process.env.LIVE_T_WRITES ?? 100);
const ROOMS = Math.max(1, Math.ceil(SUBS / ROOM));

export interface TransportResult {
  transport: 'stream routes' | '/db/live';
  opened: number;
  openMs: number;
  p50: number;
  p99: number;
  missed: number;
  cpuUsPerEvent: number;
  kbPerSub: number;
}

const rssKb = (pid: number) => Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const bodyOf = (room: number) => ({ table: 'messages', where: { room: { eq: `t${room}` } } });

/** What a transport must offer the probe: open everything, and say who got a payload. */
interface Opened {
  opened: number;
  close(): void;
}

async function openStreams(port: number, onPayload: (room: number, at: number) => void): Promise<Opened> {
  const streams: WireStream[] = [];
  let firsts = 0;
  for (let i = 0; i < SUBS; i++) {
    const room = i % ROOMS;
    const s = new WireStream({
      port,
      path: `/db/stream/count?body=${encodeURIComponent(JSON.stringify(bodyOf(room)))}`,
      onPayload: (st, _line, at) => {
        if (st.payloads === 1 || st.status !== 200) firsts++;
        else onPayload(room, at);
      },
    });
    streams.push(s);
    // Open in waves so the accept queue is not flooded.
    if (i % 200 === 199) while (firsts < i - 400) await sleep(5);
  }
  const t0 = Date.now();
  while (firsts < SUBS && Date.now() - t0 < 120_000) await sleep(20);
  return { opened: streams.filter((s) => s.status === 200).length, close: () => streams.forEach((s) => s.close()) };
}

async function openSockets(base: string, onPayload: (room: number, at: number) => void): Promise<Opened> {
  const sockets: WebSocket[] = [];
  let opened = 0;
  let firsts = 0;
  const seen = new Set<string>();
  for (let k = 0; k * PER_SOCKET < SUBS; k++) {
    const ws = new WebSocket(`${base.replace('http', 'ws')}/db/live`, 'tablebase.v1', { perMessageDeflate: false });
    sockets.push(ws);
    await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
    ws.on('message', (raw) => {
      const at = performance.now();
      const m = JSON.parse(String(raw)) as { type: string; id: string };
      if (m.type !== 'data') return;
      if (!seen.has(m.id)) {
        seen.add(m.id);
        firsts++;
        opened++;
        return;
      }
      onPayload(Number(m.id.slice(m.id.indexOf(':') + 1)), at);
    });
    for (let i = k * PER_SOCKET; i < Math.min(SUBS, (k + 1) * PER_SOCKET); i++) ws.send(JSON.stringify({ type: 'subscribe', id: `${i}:${i % ROOMS}`, route: 'count', body: bodyOf(i % ROOMS) }));
  }
  const t0 = Date.now();
  while (firsts < SUBS && Date.now() - t0 < 120_000) await sleep(20);
  return { opened, close: () => sockets.forEach((ws) => ws.terminate()) };
}

async function measure(transport: TransportResult['transport']): Promise<TransportResult> {
  const data = mkdtempSync(join(tmpdir(), 'tb-live-transports-'));
  let server: Started | undefined;
  let opened: Opened | undefined;
  try {
    server = await startProcess(['bin/tablebase.mjs', 'serve', '--project', 'bench/live-project', '--data', data, '--host', '127.0.0.1', '--port', '{port}'], {
      TABLEBASE_MAX_STREAMS: String(SUBS + 1000),
      TABLEBASE_MAX_STREAMS_PER_IP: String(SUBS + 1000),
      TABLEBASE_MAX_SUBSCRIPTIONS: String(PER_SOCKET),
      JWT_SECRET: randomBytes(32).toString('hex'),
    });
    const pid = server.proc.pid!;
    const port = Number(new URL(server.base).port);
    const create = (room: number) =>
      fetch(`${server!.base}/db`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ table: 'messages', object: { room: `t${room}`, body: 'x' } }) });
    for (let i = 0; i < 50; i++) await (await create(ROOMS + 1)).text(); // warm-up, a room nobody watches
    await sleep(500);
    const rss0 = rssKb(pid);
    // The probe: which room the current write went to, when it was sent, and who got it.
    let probe: { room: number; sent: number; got: number } | undefined;
    const latencies: number[] = [];
    const onPayload = (room: number, at: number) => {
      if (!probe || room !== probe.room) return;
      probe.got++;
      latencies.push(at - probe.sent);
    };
    const t0 = Date.now();
    opened = transport === 'stream routes' ? await openStreams(port, onPayload) : await openSockets(server.base, onPayload);
    const openMs = Date.now() - t0;
    await sleep(1000);
    const rss1 = rssKb(pid);
    let missed = 0;
    const cpu0 = cpuSeconds(pid);
    let delivered = 0;
    for (let w = 0; w < WRITES; w++) {
      const room = Math.floor(Math.random() * ROOMS);
      const expected = Math.ceil((SUBS - room) / ROOMS);
      probe = { room, sent: performance.now(), got: 0 };
      await (await create(room)).text();
      const until = Date.now() + 5_000;
      while (probe.got < expected && Date.now() < until) await sleep(1);
      missed += expected - probe.got;
      delivered += probe.got;
    }
    const cpu = cpuSeconds(pid) - cpu0;
    return {
      transport,
      opened: opened.opened,
      openMs,
      p50: pct(latencies, 50),
      p99: pct(latencies, 99),
      missed,
      cpuUsPerEvent: (cpu * 1e6) / Math.max(1, delivered),
      kbPerSub: (rss1 - rss0) / Math.max(1, opened.opened),
    };
  } finally {
    opened?.close();
    server?.stop();
    rmSync(data, { recursive: true, force: true });
  }
}

export async function compareTransports(log: (s: string) => void = console.log): Promise<TransportResult[]> {
  log(`· ${SUBS} subscriptions (${ROOM} per room, ${WRITES} probe writes): stream routes, then /db/live over ${Math.ceil(SUBS / PER_SOCKET)} WebSockets, each on a fresh server`);
  const results: TransportResult[] = [];
  for (const t of ['stream routes', '/db/live'] as const) {
    const r = await measure(t);
    results.push(r);
    log(
      `  ${t}: ${r.opened} open in ${(r.openMs / 1000).toFixed(1)} s; delivery p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, missed ${r.missed}; server CPU ${r.cpuUsPerEvent.toFixed(1)} µs per delivered event; RSS ${r.kbPerSub.toFixed(1)} KB per subscription`,
    );
  }
  const [st, ws] = results as [TransportResult, TransportResult];
  log(
    `  /db/live vs stream routes: memory per subscription ${(ws.kbPerSub / st.kbPerSub).toFixed(2)}× (target <= 0.5), CPU per event ${(ws.cpuUsPerEvent / st.cpuUsPerEvent).toFixed(2)}× (target <= 1), p99 ${(ws.p99 / st.p99).toFixed(2)}×`,
  );
  return results;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  compareTransports().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
