#!/usr/bin/env node
// `npm test` (issue #27 item 9): every check runs even when an earlier one failed — the type check,
// the layer rules, the storage boundary, the suite on SQLite, then the end-to-end suite again on
// PostgreSQL + Redis, and the photo end-to-end tests again with photos in an S3 bucket — and a
// summary names each result. The exit code is non-zero when any of them failed.
// Extra arguments go to every vitest run (`npm test -- test/data`).
import { spawnSync } from 'node:child_process';
import { delimiter, join } from 'node:path';

const root = join(import.meta.dirname, '..');
// npm puts node_modules/.bin on PATH; so does this, for `node scripts/test.mjs`.
const env = { ...process.env, PATH: `${join(root, 'node_modules', '.bin')}${delimiter}${process.env.PATH ?? ''}` };
const extra = process.argv.slice(2);

const steps = [
  ['type check (tsc)', 'tsc', ['--noEmit', '-p', '.']],
  ['layer rules (dependency-cruiser)', 'depcruise', ['src', '--config', '.dependency-cruiser.cjs']],
  ['storage boundary (no SQL text or database-name checks outside src/storage/)', 'node', ['--import', 'tsx', 'scripts/check-storage-boundary.ts']],
  ['tests on SQLite (vitest.config.ts)', 'vitest', ['run', ...extra]],
  ['end-to-end tests on PostgreSQL + Redis (vitest.postgres.config.ts)', 'vitest', ['run', '--config', 'vitest.postgres.config.ts', ...extra]],
  ['photo end-to-end tests on S3 (vitest.s3.config.ts)', 'vitest', ['run', '--config', 'vitest.s3.config.ts', ...extra]],
];

const results = [];
for (const [name, command, args] of steps) {
  console.log(`\n=== ${name}`);
  const started = Date.now();
  const r = spawnSync(command, args, { stdio: 'inherit', cwd: root, env, shell: process.platform === 'win32' });
  const status = r.status ?? 1;
  results.push({ name, ok: status === 0, how: r.signal ? `killed by ${r.signal}` : `exit ${status}`, seconds: Math.round((Date.now() - started) / 1000) });
  // Ctrl-C stops the whole run, not just the step that was running.
  if (r.signal === 'SIGINT' || r.signal === 'SIGTERM') break;
}

console.log('\n=== npm test summary');
for (const r of results) console.log(`${r.ok ? 'PASS' : 'FAIL'}  ${r.name}  (${r.how}, ${r.seconds} s)`);
const failed = results.filter((r) => !r.ok).length + (steps.length - results.length);
console.log(failed ? `${failed} of ${steps.length} failed` : `all ${steps.length} passed`);
process.exit(failed ? 1 : 0);
