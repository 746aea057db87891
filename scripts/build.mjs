#!/usr/bin/env node
/**
 * `npm run build` (and `prepack`): what the published package runs.
 *  1. tsc (tsconfig.build.json) compiles src/ to ESM JavaScript in dist/ with .d.ts types and
 *     source maps (one tsc run: about 6 s here, so esbuild for the JavaScript would save little).
 *  2. The client runtime's TypeScript sources are copied to dist/client/runtime-source/: `tablebase gen
 *     client` pastes them into the file it writes (src/client/generate.ts reads them).
 *  3. The dashboard's UI is bundled once into dist/dashboard/prebuilt/ (a checkout bundles it in
 *     memory instead; src/dashboard/assets.ts).
 * A build stamp (dist/.build) is written last: bin/tablebase.mjs runs dist/ only when it exists.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const dist = join(root, 'dist');
const started = performance.now();

rmSync(dist, { recursive: true, force: true });
execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')], { stdio: ['ignore', 2, 2] });

// As .txt: a .ts beside the .d.ts files would be type-checked by every user's tsc.
mkdirSync(join(dist, 'client/runtime-source'), { recursive: true });
for (const f of ['runtime.ts', 'runtime-live.ts', 'runtime-services.ts']) copyFileSync(join(root, 'src/client', f), join(dist, 'client/runtime-source', `${f}.txt`));

const { bundleDashboard } = await import(join(dist, 'dashboard/assets.js'));
const { js, css } = await bundleDashboard(join(root, 'src/dashboard/ui'));
mkdirSync(join(dist, 'dashboard/prebuilt'), { recursive: true });
writeFileSync(join(dist, 'dashboard/prebuilt/app.js'), js);
writeFileSync(join(dist, 'dashboard/prebuilt/app.css'), css);

writeFileSync(join(dist, '.build'), `${new Date().toISOString()}\n`);
console.error(`built dist/ in ${Math.round(performance.now() - started)} ms`);
