/**
 * The live benchmark's load client, run in its own process by bench/live.ts (a process may hold
 * 20,000 open files here, and the server needs its own share). It opens groups of stream-list
 * subscriptions over raw sockets (live-wire.ts), makes probe writes, and answers per-payload
 * latencies, all timed with this process's own clock: from the moment a write is sent, and from
 * the moment its answer arrived.
 *
 * Driven over IPC: `{id, cmd, ...args}` in, `{id, result}` or `{id, error}` out.
 */
import { Agent, request } from 'node:http';
import { WireStream } from './live-wire.js';

export type Group = 'distinct' | 'fanout' | 'shared';

export interface OpenResult {
  opened: number;
  refused: number;
  failed: number;
  ms: number;
  /** One refusal's status and body, for the report. */
  sample?: string;
}

export interface ProbeResult {
  /** Payload arrival minus write sent, ms, one per (write, target stream). */
  fromSend: number[];
  /** Payload arrival minus the write's answer, ms (negative: the payload came first). */
  fromAnswer: number[];
  /** Write round trips, ms. */
  writeMs: number[];
  /** Targets that got no payload within the timeout. */
  missed: number;
  /** Payloads that did not contain the written row's id. */
  wrong: number;
}

/**
 * The stream-list bodies. `fanout` and `shared` watch a room's newest 20 messages, the page a chat
 * view shows, so a payload keeps one size (about 3 KB) however many probe writes came before.
 */
const NEWEST = { order_by: [{ column: 'createdAt', direction: 'desc' }], limit: 20 };
const BODY: Record<Group, (i: number) => object> = {
  distinct: (i) => ({ where: { room: { eq: `r${i}` } } }),
  // Distinct queries (a different `n` bound each) that one write with n = 0 matches.
  fanout: (i) => ({ where: { room: { eq: 'fan' }, n: { gte: -i } }, ...NEWEST }),
  shared: () => ({ where: { room: { eq: 'shared' } }, ...NEWEST }),
};
const ROOM: Record<Group, (i: number) => string> = { distinct: (i) => `r${i}`, fanout: () => 'fan', shared: () => 'shared' };

let port = 0;
const groups: Record<Group, WireStream[]> = { distinct: [], fanout: [], shared: [] };
/** Resolvers of streams still waiting for their first payload. */
const firstPayload = new Map<WireStream, () => void>();
/** The probe in progress: per target stream, the index of its arrival slot. */
let probe: { slot: Map<WireStream, number>; at: number[]; lines: string[]; left: number; done: () => void } | null = null;

function onPayload(s: WireStream, line: string, at: number): void {
  const first = firstPayload.get(s);
  if (first) {
    firstPayload.delete(s);
    first();
    return;
  }
  if (!probe) return;
  const i = probe.slot.get(s);
  if (i === undefined || probe.at[i]! >= 0) return;
  probe.at[i] = at;
  probe.lines[i] = line;
  if (--probe.left === 0) probe.done();
}

function openOne(group: Group, i: number): Promise<WireStream> {
  const body = encodeURIComponent(JSON.stringify({ table: 'messages', ...BODY[group](i) }));
  const s = new WireStream({ port, path: `/db/stream/list?body=${body}`, onPayload });
  return new Promise((resolve) => {
    const done = () => {
      firstPayload.delete(s);
      resolve(s);
    };
    firstPayload.set(s, done);
    s.socket.once('close', done);
  });
}

async function open(group: Group, count: number, concurrency: number): Promise<OpenResult> {
  const t0 = performance.now();
  const r: OpenResult = { opened: 0, refused: 0, failed: 0, ms: 0 };
  const base = groups[group].length;
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = base + next++;
      const s = await openOne(group, i);
      s.tag = i; // streams finish opening out of order: remember which room each one watches
      if (s.status === 200 && !s.closed) {
        groups[group].push(s);
        r.opened++;
      } else {
        if (s.status !== 0) r.refused++;
        else r.failed++;
        r.sample ??= `${s.status} ${s.body || s.error || ''}`.slice(0, 300);
        s.close();
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  r.ms = performance.now() - t0;
  return r;
}

const agent = new Agent({ keepAlive: true, maxSockets: 4 });
function create(room: string): Promise<{ id: string; at: number }> {
  const payload = JSON.stringify({ table: 'messages', object: { room, body: 'probe', n: 0 } });
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/db', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        const at = performance.now();
        if (res.statusCode !== 200) reject(new Error(`create answered ${res.statusCode}: ${text}`));
        else resolve({ id: JSON.parse(text).data.id, at });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * `writes` sequential creates; each must reach its targets (one random stream of the group for
 * `distinct`, every stream of it otherwise) before the next is sent.
 */
async function probeGroup(group: Group, writes: number, timeoutMs: number): Promise<ProbeResult> {
  const out: ProbeResult = { fromSend: [], fromAnswer: [], writeMs: [], missed: 0, wrong: 0 };
  const all = groups[group];
  if (all.length === 0) throw new Error(`no open streams in group ${group}`);
  for (let w = 0; w < writes; w++) {
    const pick = group === 'distinct' ? all[Math.floor(Math.random() * all.length)]! : null;
    const targets = pick ? [pick] : all;
    const room = ROOM[group](pick ? (pick.tag as number) : 0);
    let done!: () => void;
    const arrived = new Promise<void>((r) => (done = r));
    probe = { slot: new Map(targets.map((s, i) => [s, i])), at: targets.map(() => -1), lines: targets.map(() => ''), left: targets.length, done };
    const sent = performance.now();
    const answer = await create(room);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([arrived, new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)))]);
    clearTimeout(timer);
    const p = probe;
    probe = null;
    out.writeMs.push(answer.at - sent);
    p.at.forEach((at, i) => {
      if (at < 0) return void out.missed++;
      if (!p.lines[i]!.includes(answer.id)) out.wrong++;
      out.fromSend.push(at - sent);
      out.fromAnswer.push(at - answer.at);
    });
    await new Promise((r) => setTimeout(r, 10));
  }
  return out;
}

function closeAll(): { closed: number; droppedByServer: number } {
  let closed = 0;
  let droppedByServer = 0;
  for (const g of Object.values(groups)) {
    for (const s of g.splice(0)) {
      if (s.closed) droppedByServer++;
      s.close();
      closed++;
    }
  }
  return { closed, droppedByServer };
}

function health(): Record<Group, { open: number; closedByServer: number; heartbeats: number }> {
  const h = {} as Record<Group, { open: number; closedByServer: number; heartbeats: number }>;
  for (const [g, list] of Object.entries(groups) as [Group, WireStream[]][]) {
    h[g] = { open: list.filter((s) => !s.closed).length, closedByServer: list.filter((s) => s.closed).length, heartbeats: list.reduce((n, s) => n + s.heartbeats, 0) };
  }
  return h;
}

type Command =
  | { cmd: 'init'; port: number }
  | { cmd: 'open'; group: Group; count: number; concurrency: number }
  | { cmd: 'probe'; group: Group; writes: number; timeoutMs: number }
  | { cmd: 'health' }
  | { cmd: 'closeAll' };

async function run(c: Command): Promise<unknown> {
  switch (c.cmd) {
    case 'init':
      port = c.port;
      return { pid: process.pid };
    case 'open':
      return open(c.group, c.count, c.concurrency);
    case 'probe':
      return probeGroup(c.group, c.writes, c.timeoutMs);
    case 'health':
      return health();
    case 'closeAll':
      return closeAll();
  }
}

process.on('message', (m: Command & { id: number }) => {
  run(m).then(
    (result) => process.send!({ id: m.id, result }),
    (err: unknown) => process.send!({ id: m.id, error: err instanceof Error ? err.message : String(err) }),
  );
});
// The parent going away ends this process: it must never linger holding thousands of sockets.
process.on('disconnect', () => process.exit(0));
