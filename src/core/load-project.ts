/** Loads `tablebase.config.ts` (and what it imports) from a project folder. */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Project } from '../define/project.js';

const NAMES = ['tablebase.config.ts', 'tablebase.config.mts', 'tablebase.config.js', 'tablebase.config.mjs'];

export async function loadProject(projectDir: string): Promise<Project> {
  const dir = resolve(projectDir);
  const file = NAMES.map((n) => join(dir, n)).find((f) => existsSync(f));
  if (!file) throw new Error(`No tablebase.config.ts in ${dir}`);
  const mod = (await import(pathToFileURL(file).href).catch((err: NodeJS.ErrnoException) => {
    // A project outside this repository resolves 'tablebase' from its own node_modules (issue #16).
    if (err.code === 'ERR_MODULE_NOT_FOUND' && /package 'tablebase'/.test(err.message)) {
      throw new Error(`${file} imports 'tablebase', which is not installed there: run \`npm install\` in ${dir} (or \`npm install <path to tablebase>\`)`);
    }
    throw err;
  })) as { default?: unknown };
  const project = mod.default as Project | undefined;
  if (!project || (project as { __tablebaseProject?: unknown }).__tablebaseProject !== true) {
    throw new Error(`${file} must export default defineProject({...})`);
  }
  return project;
}
