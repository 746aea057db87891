#!/usr/bin/env node
// The tablebase CLI. The installed package runs its compiled JavaScript (dist/, made by
// `npm run build`); a checkout of the repository (src/ present) runs the TypeScript sources
// through tsx, a devDependency, so development and the tests need no build step and never run a
// stale dist/. TABLEBASE_RUN=dist runs dist/ in a checkout (bench/startup.ts), TABLEBASE_RUN=src
// the sources. See docs/install.md.
import { existsSync } from 'node:fs';

const root = new URL('../', import.meta.url);
const built = existsSync(new URL('dist/.build', root));
const checkout = existsSync(new URL('src/cli/index.ts', root));
const want = process.env.TABLEBASE_RUN ?? (checkout ? 'src' : 'dist');

if (want === 'dist' && built) {
  await import('../dist/cli/index.js');
} else if (checkout) {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/index.ts');
} else {
  console.error('tablebase: this copy has no dist/ (run `npm run build`)');
  process.exit(1);
}
