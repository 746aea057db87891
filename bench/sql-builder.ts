/**
 * `node --import tsx bench/sql-builder.ts`: the cost of the internal-table SQL builder
 * (src/storage/sql.ts, issue #20), which compiles its tagged template on every call, against the
 * hand-built statements it replaced (text built once, parameters in an array), on the same
 * database in the same run (SQLite; `BENCH_POSTGRES=1`: a fresh PostgreSQL database on the local server). Three workloads of the session store: a lookup by id (one
 * parameter), a 9-parameter insert, and compile alone (no database). Rounds alternate which side
 * goes first; ratios are medians of per-round ratios (ours / baseline time per call, 1.00 = same).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { authTokensTable, sessionsTable } from '../src/auth/schema.js';
import { compileProject } from '../src/core/model.js';
import { defineProject } from '../src/define/index.js';
import { migrationStatements } from '../src/storage/migrations/ddl.js';
import { diffSchemas } from '../src/storage/migrations/diff.js';
import { schemaOf } from '../src/storage/migrations/snapshot.js';
import { sessionsRepo } from '../src/storage/repos/sessions.js';
import { compile, sql, tableRef } from '../src/storage/sql.js';
import type { Driver } from '../src/storage/driver.js';
import { openPostgres } from '../src/storage/postgres/driver.js';
import { createTestDatabase } from '../src/storage/postgres/test-database.js';
import { openSqlite } from '../src/storage/sqlite/driver.js';
import { median } from './lib.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const N = Number(process.env.BENCH_CALLS ?? 20_000);
const dir = mkdtempSync(join(tmpdir(), 'tb-bench-sql-'));
const pg = process.env.BENCH_POSTGRES === '1' ? await createTestDatabase() : undefined;
const driver: Driver = pg ? await openPostgres(pg.url) : openSqlite(join(dir, 'db.sqlite'));

try {
  const d = driver.dialect;
  const model = compileProject(defineProject({ tables: [] }), [sessionsTable, authTokensTable]);
  const next = schemaOf(model, d);
  await driver.execScript(migrationStatements(diffSchemas(null, next), { dialect: d, prev: null, next, now: new Date().toISOString() }).join(';\n'));
  const repo = sessionsRepo(d, { sessions: sessionsTable, tokens: authTokensTable });
  await driver.transaction(async (tx) => {
    for (let i = 0; i < 1000; i++) await repo.insertSession(tx, { id: `ss_${i}`, table: 'users', userId: `us_${i}`, now: i, expiresAt: i + 1e9 });
  });

  // The baseline: the statements as auth/sql-store.ts built them before issue #20 (text once).
  const q = d.quote;
  const [S, T] = [q('_sessions'), q('_auth_tokens')];
  const c = (n: string) => q(n);
  const p = (n: number) => d.param(n);
  const findText = `SELECT ${c('id')} AS ${q('id')}, ${c('auth_table')} AS ${q('table')}, ${c('user_id')} AS ${q('userId')}, ${c('created_at')} AS ${q('createdAt')}, ${c('last_used_at')} AS ${q('lastUsedAt')}, ${c('expires_at')} AS ${q('expiresAt')}, ${c('revoked_at')} AS ${q('revokedAt')}, ${c('revoke_reason')} AS ${q('revokeReason')} FROM ${S} WHERE ${c('id')} = ${p(1)}`;
  const insertText = `INSERT INTO ${T} (${['id', 'kind', 'token_hash', 'auth_table', 'user_id', 'session_id', 'email', 'created_at', 'expires_at'].map(c).join(', ')}) VALUES (${Array.from({ length: 9 }, (_, i) => p(i + 1)).join(', ')})`;
  const ST = tableRef(sessionsTable);

  let seq = 0;
  const workloads: { name: string; base: (i: number) => unknown; ours: (i: number) => unknown; tx?: boolean }[] = [
    { name: 'find session by id (1 param)', base: (i) => driver.get(findText, [`ss_${i % 1000}`]), ours: (i) => repo.findSession(driver, `ss_${i % 1000}`) },
    {
      name: 'insert token (9 params, in one transaction per 1000)',
      tx: true,
      base: () => ({ text: insertText, params: [`at_b${seq++}`, 'verify', `hb${seq}`, 'users', 'us_1', null, 'a@x', 1, 2] }),
      ours: () => ({ id: `at_o${seq++}`, kind: 'verify', hash: `ho${seq}`, table: 'users', userId: 'us_1', sessionId: null, email: 'a@x', now: 1, expiresAt: 2 }),
    },
    { name: 'compile only (no database)', base: (i) => ({ text: findText, params: [`ss_${i}`] }), ours: (i) => compile(d, sql`SELECT ${ST.c.id} FROM ${ST.table} WHERE ${ST.c.id} = ${`ss_${i}`}`) },
  ];

  const time = async (w: (typeof workloads)[number], side: 'base' | 'ours'): Promise<number> => {
    const start = process.hrtime.bigint();
    if (w.tx) {
      for (let done = 0; done < N; done += 1000) {
        await driver.transaction(async (tx) => {
          for (let i = 0; i < 1000; i++) {
            if (side === 'base') {
              const s = w.base(i) as { text: string; params: unknown[] };
              await tx.run(s.text, s.params);
            } else await repo.insertToken(tx, w.ours(i) as Parameters<typeof repo.insertToken>[1]);
          }
        });
      }
    } else {
      for (let i = 0; i < N; i++) await (side === 'base' ? w.base(i) : w.ours(i));
    }
    return Number(process.hrtime.bigint() - start) / N; // ns per call
  };

  console.log(`${pg ? 'PostgreSQL' : 'SQLite'}, ${N} calls per side per round\n`);
  console.log(`| workload | baseline ns/call | builder ns/call | ratio (median of ${ROUNDS}) |\n|---|---|---|---|`);
  for (const w of workloads) {
    const ratios: number[] = [];
    const bases: number[] = [];
    const ours: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const [first, second] = r % 2 === 0 ? (['base', 'ours'] as const) : (['ours', 'base'] as const);
      const a = await time(w, first);
      const b = await time(w, second);
      const [tb, to] = first === 'base' ? [a, b] : [b, a];
      bases.push(tb);
      ours.push(to);
      ratios.push(to / tb);
    }
    console.log(`| ${w.name} | ${median(bases).toFixed(0)} | ${median(ours).toFixed(0)} | ${median(ratios).toFixed(2)} |`);
  }
} finally {
  await driver.close();
  await pg?.drop();
  rmSync(dir, { recursive: true, force: true });
}
