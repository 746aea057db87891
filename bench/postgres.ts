/**
 * `node --import tsx bench/postgres.ts` (issue #15): Tablebase on PostgreSQL against a raw
 * node:http + pg server running the same SQL (targets at c=50: list+total ≥ 60%, get ≥ 50%,
 * create ≥ 50%), the same scenarios on SQLite for comparison, and cross-node live delivery
 * p50/p99 for 1,000 writes (two nodes, PostgreSQL + Redis; target p99 < 100 ms). Short runs:
 * BENCH_SECONDS (default 5) per scenario, c=50 only; every database is fresh and dropped after.
 */
import type { Request } from 'autocannon';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '../src/storage/postgres/test-database.js';
import { HEADER, load, rawServerArgs, row, startProcess, type Started } from './lib.js';
import { openLiveClient } from './postgres-live.js';

process.env.BENCH_SECONDS ??= '5';
const SEED = 10_000;
const C = 50;
const q = (o: unknown) => encodeURIComponent(JSON.stringify(o));
const data = mkdtempSync(join(tmpdir(), 'tb-bench-pg-'));
const dbs: TestDatabase[] = [];
const procs: Started[] = [];
const db = async () => {
  const d = await createTestDatabase();
  dbs.push(d);
  return d.url;
};
const start = async (args: string[], env: Record<string, string> = {}) => {
  const p = await startProcess(args, env);
  procs.push(p);
  return p;
};
const tablebase = (name: string, extra: string[], env: Record<string, string> = {}) =>
  start(['bin/tablebase.mjs', 'serve', '--project', 'examples/bench', '--data', join(data, name), '--host', '127.0.0.1', '--port', '{port}', ...extra], env);

async function seed(url: string, raw: boolean): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < SEED; i += 500) {
    const objects = Array.from({ length: 500 }, (_, j) => ({ title: `item ${i + j}`, n: i + j }));
    if (raw) {
      for (const o of objects) ids.push(((await (await fetch(`${url}/db`, { method: 'POST', body: JSON.stringify({ table: 'items', object: o }) })).json()) as { data: { id: string } }).data.id);
    } else {
      const r = await fetch(`${url}/db/many`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ table: 'items', objects }) });
      ids.push(...((await r.json()) as { data: { id: string }[] }).data.map((x) => x.id));
    }
  }
  return ids;
}

const scenarios = [
  { name: 'list limit 50 + total', opts: (url: string) => ({ url: `${url}/db/list?body=${q({ table: 'items', limit: 50 })}` }) },
  {
    name: 'get by id',
    opts: (url: string, ids: string[]) => ({
      url,
      requests: [{ setupRequest: (req: Request) => ({ ...req, path: `/db?body=${q({ table: 'items', where: { id: { eq: ids[Math.floor(Math.random() * ids.length)] } } })}` }) }],
    }),
  },
  {
    name: 'create',
    opts: (url: string) => ({ url: `${url}/db`, method: 'POST' as const, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ table: 'items', object: { title: 'bench', n: 1 } }) }),
  },
];

async function compare(label: string, base: Started, ours: Started, baseIds: string[], ourIds: string[]): Promise<string[]> {
  const lines: string[] = [];
  for (const s of scenarios) {
    const b = await load({ ...s.opts(base.base, baseIds), connections: C });
    const o = await load({ ...s.opts(ours.base, ourIds), connections: C });
    lines.push(row(`${label}: ${s.name} c=${C}`, b, o));
    console.log(lines.at(-1));
  }
  return lines;
}

try {
  const lines: string[] = [];
  // PostgreSQL: Tablebase against the raw pg server.
  const pgOurs = await tablebase('pg', ['--database', await db()]);
  const pgBase = await start(['--import', 'tsx', 'bench/raw-pg-server.ts', await db(), '{port}']);
  lines.push(...(await compare('PostgreSQL', pgBase, pgOurs, await seed(pgBase.base, true), await seed(pgOurs.base, false))));
  pgOurs.stop();
  pgBase.stop();
  // SQLite, the same scenarios, for comparison.
  const sqOurs = await tablebase('sqlite', []);
  const sqBase = await start(rawServerArgs(join(data, 'raw.sqlite'), '{port}'));
  lines.push(...(await compare('SQLite', sqBase, sqOurs, await seed(sqBase.base, true), await seed(sqOurs.base, false))));
  sqOurs.stop();
  sqBase.stop();
  // Cross-node live delivery: a count stream on B, 1,000 sequential creates on A.
  const shared = ['--database', await db(), '--redis', process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'];
  const env = { REDIS_PREFIX: `tb-bench:${randomBytes(6).toString('hex')}:`, JWT_SECRET: randomBytes(32).toString('hex'), PASSWORD_SECRET: randomBytes(32).toString('hex') };
  const a = await tablebase('a', shared, env);
  const b = await tablebase('b', shared, env);
  const live = await openLiveClient(b.base, { table: 'items', where: { title: { eq: 'live' } } });
  const total: number[] = [];
  const afterAnswer: number[] = [];
  for (let i = 1; i <= 1000; i++) {
    const t0 = performance.now();
    const seen = live.waitFor(i).then(() => performance.now());
    await fetch(`${a.base}/db`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ table: 'items', object: { title: 'live', n: i } }) });
    const answered = performance.now();
    const at = await seen;
    total.push(at - t0);
    afterAnswer.push(Math.max(0, at - answered));
  }
  live.close();
  const pct = (xs: number[], p: number) => [...xs].sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!.toFixed(1);
  const stats = (xs: number[]) => `p50 ${pct(xs, 50)} ms, p99 ${pct(xs, 99)} ms, max ${pct(xs, 100)} ms`;
  console.log(`\n${HEADER}\n${lines.join('\n')}`);
  console.log(`\ncross-node live delivery, 1,000 sequential writes on A, a count stream on B:`);
  console.log(`  write sent → frame on B: ${stats(total)}`);
  console.log(`  write answered → frame on B: ${stats(afterAnswer)}`);
} finally {
  for (const p of procs) p.stop();
  for (const d of dbs) await d.drop().catch(() => {});
  rmSync(data, { recursive: true, force: true });
}
