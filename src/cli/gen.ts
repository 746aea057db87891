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
import { flag, projectDirOf, type Args } from './args.js';

export async function gen(args: Args): Promise<void> {
  const projectDir = projectDirOf(args);
  const project = await loadProject(projectDir);
  const model = compileProject(project, internalTables(project));
  const out = resolve(flag(args, 'out') ?? join(projectDir, 'tablebase-client.ts'));
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, generateClient(model));
  console.log(`Wrote ${out}`);
}
