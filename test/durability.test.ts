/**
 * docs/reference/rules-and-hooks.md: a write answered 2xx survives `kill -9` of the server right after the answer.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer } from './helpers/server.js';

const dataDir = mkdtempSync(join(tmpdir(), 'tb-durable-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('graceful shutdown', () => {
  it('on SIGTERM closes open streams, keeps acknowledged writes and exits 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tb-term-'));
    try {
      const s = await startServer({ dataDir: dir });
      const body = encodeURIComponent(JSON.stringify({ table: 'tasks' }));
      const stream = await fetch(`${s.base}/db/stream/count?body=${body}`);
      expect(stream.status).toBe(200);
      const reader = stream.body!.getReader();
      await reader.read(); // the first payload
      const writes = Array.from({ length: 20 }, (_, i) => s.call('POST', '/db', { table: 'big', object: { payload: `t${i}` } }));
      const acked = (await Promise.all(writes)).filter((r) => r.status === 200).length;
      const code = await s.stop('SIGTERM');
      expect(code).toBe(0);
      // The stream ends rather than hanging.
      for (;;) if ((await reader.read()).done) break;
      const again = await startServer({ dataDir: dir, env: s.env });
      expect((await again.get('/db/count', { table: 'big' })).json.data).toBe(acked);
      await again.stop('SIGKILL');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('durability', () => {
  it('every acknowledged create is there after kill -9 and a restart', async () => {
    const first = await startServer({ dataDir });
    const acked: string[] = [];
    // Concurrent writers, so group commit is exercised; kill the moment the last answer arrives.
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        for (let i = 0; i < 25; i++) {
          const r = await first.call('POST', '/db', { table: 'big', object: { payload: `w${w}-${i}` } });
          if (r.status === 200) acked.push(r.json.data.id);
        }
      }),
    );
    const many = await first.call('POST', '/db/many', { table: 'big', objects: [{ payload: 'm1' }, { payload: 'm2' }] });
    acked.push(...many.json.data.map((r: { id: string }) => r.id));
    first.proc.kill('SIGKILL');
    await first.stop('SIGKILL');
    expect(acked.length).toBe(202);

    const second = await startServer({ dataDir, env: first.env });
    try {
      const found = new Set<string>();
      for (let offset = 0; ; offset += 1000) {
        const page = await second.get('/db/list', { table: 'big', limit: 1000, offset });
        for (const row of page.json.data.items) found.add(row.id);
        if (page.json.data.items.length < 1000) break;
      }
      expect(acked.filter((id) => !found.has(id))).toEqual([]);
    } finally {
      await second.stop('SIGKILL');
    }
  });
});
