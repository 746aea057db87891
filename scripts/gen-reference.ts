/**
 * Writes the generated pages of docs/reference/ from the code itself, so they cannot drift from
 * it: `http-api.md` (every route, from the route declarations and the OpenAPI document they
 * produce for examples/conformance), `cli.md` (every command and flag, from the CLI's own table)
 * and `errors.md` (the error catalog). `npm run docs:reference` rewrites them;
 * test/docs/reference.test.ts fails when a committed page differs from what this would write.
 *
 *   node --import tsx scripts/gen-reference.ts [--check]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { referencePages } from './reference/pages.js';

const ROOT = resolve(import.meta.dirname, '..');

async function main(): Promise<void> {
  const check = process.argv.includes('--check');
  const pages = await referencePages();
  const stale: string[] = [];
  for (const [name, text] of Object.entries(pages)) {
    const file = join(ROOT, 'docs/reference', name);
    let old = '';
    try {
      old = readFileSync(file, 'utf8');
    } catch {
      // a page not written yet is stale
    }
    if (old === text) continue;
    stale.push(name);
    if (!check) writeFileSync(file, text);
  }
  if (check && stale.length) {
    console.error(`docs/reference is out of date (${stale.join(', ')}): run npm run docs:reference`);
    process.exit(1);
  }
  console.log(stale.length ? `${check ? 'stale' : 'wrote'}: ${stale.join(', ')}` : 'docs/reference is up to date');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
