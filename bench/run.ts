/**
 * `npm run bench`: Tablebase against a raw node:http + better-sqlite3 server doing the same SQL,
 * measured in the same run so the shared machine's noise cancels out in the ratios (issue #2
 * targets at c=50: list ≥ 70%, get ≥ 50%, create ≥ 60%).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HEADER, load, row, startProcess, type Load } from './lib.js';

const SEED = 10_000;
const data = mkdtempSync(join(tmpdir(), 'tb-bench-'));
const ours = await startProcess(['bin/tablebase.mjs', '__run-dev', '--project', 'examples/bench', '--data', join(data, 'tb'), '--host', '127.0.0.1', '--port', '{port}']);
const base = await startProcess(['--import', 'tsx', 'bench/raw-server.ts', join(data, 'raw.sqlite'), '{port}']);

async function seed(url: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < SEED; i += 1000) {
    const objects = Array.from({ length: 1000 }, (_, j) => ({ title: `item ${i + j}`, n: i + j }));
    if (url === base.base) {
      for (const o of objects) {
        const r = await fetch(`${url}/db`, { method: 'POST', body: JSON.stringify({ table: 'items', object: o }) });
        ids.push(((await r.json()) as any).data.id);
      }
    } else {
      const r = await fetch(`${url}/db/many`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ table: 'items', objects }) });
      ids.push(...((await r.json()) as any).data.map((x: any) => x.id));
    }
  }
  return ids;
}

try {
  const [ourIds, baseIds] = [await seed(ours.base), await seed(base.base)];
  const q = (o: unknown) => encodeURIComponent(JSON.stringify(o));
  const scenarios: { name: string; opts: (url: string, ids: string[]) => Parameters<typeof load>[0] }[] = [
    { name: 'list limit 50 + total', opts: (url) => ({ url: `${url}/db/list?body=${q({ table: 'items', limit: 50 })}` }) },
    {
      name: 'get by id',
      opts: (url, ids) => ({
        url,
        requests: [{ setupRequest: (req: any) => ({ ...req, path: `/db?body=${q({ table: 'items', where: { id: { eq: ids[Math.floor(Math.random() * ids.length)] } } })}` }) }],
      }),
    },
    {
      name: 'create',
      opts: (url) => ({ url: `${url}/db`, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ table: 'items', object: { title: 'bench', n: 1 } }) }),
    },
  ];
  const lines: string[] = [];
  for (const c of [10, 50]) {
    for (const s of scenarios) {
      // Alternate which server goes first, so neither always runs on a warmer machine.
      const b: Load = await load({ ...s.opts(base.base, baseIds), connections: c });
      const o: Load = await load({ ...s.opts(ours.base, ourIds), connections: c });
      lines.push(row(`${s.name} c=${c}`, b, o));
      console.log(lines.at(-1));
    }
  }
  console.log(`\n${HEADER}\n${lines.join('\n')}`);
} finally {
  ours.stop();
  base.stop();
  rmSync(data, { recursive: true, force: true });
}
