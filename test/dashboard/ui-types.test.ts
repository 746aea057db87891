/**
 * The dashboard UI (src/dashboard/ui, DOM + Preact JSX) has its own tsconfig, excluded from the
 * root one (whose lib is Node's). This test type-checks it, so `npm test` covers it too.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { ROOT } from '../helpers/server.js';

it('the dashboard UI type-checks against src/dashboard/ui/tsconfig.json', async () => {
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  const run = await promisify(execFile)(process.execPath, [tsc, '--noEmit', '-p', 'src/dashboard/ui'], { cwd: ROOT, timeout: 120_000 }).then(
    () => ({ ok: true, out: '' }),
    (err: { stdout?: string; stderr?: string }) => ({ ok: false, out: `${err.stdout ?? ''}${err.stderr ?? ''}` }),
  );
  expect(run.out).toBe('');
  expect(run.ok).toBe(true);
}, 120_000);
