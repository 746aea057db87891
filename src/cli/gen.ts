/**
 * `tablebase gen client [--project DIR] [--out FILE]`: writes the project's typed TypeScript
 * client (default `<project>/tablebase-client.ts`). No database is opened.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { generateClient } from '../client/generate.js';
import { internalTables } from '../server/app.js';
import { loadProject } from '../core/load-project.js';
import { compileProject } from '../core/model.js';
import { flag, type Args } from './args.js';

const USAGE = 'Usage: tablebase gen client [--project DIR] [--out FILE]';

export async function gen(args: Args, sub: string | undefined): Promise<void> {
  if (sub !== 'client') throw new Error(sub ? `unknown generator "${sub}". ${USAGE}` : USAGE);
  const projectDir = flag(args, 'project') ?? process.env.TABLEBASE_PROJECT ?? '.';
  const project = await loadProject(projectDir);
  const model = compileProject(project, internalTables(project));
  const out = resolve(flag(args, 'out') ?? join(projectDir, 'tablebase-client.ts'));
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, generateClient(model));
  console.log(`Wrote ${out}`);
}
