/**
 * Loads `tablebase.config.ts` (and what it imports) from a project folder, with no build step
 * (docs/reference/configuration.md): esbuild bundles the config and its relative imports into one
 * ES module, which is then imported. Two things follow:
 * - `import … from 'tablebase'` in the config resolves to the Tablebase running this code (its
 *   definition API, the same module instances the server uses), whatever the project has
 *   installed; other packages stay imports, resolved from the project's node_modules.
 * - The bundle is cached in `<project>/node_modules/.cache/tablebase/` under the content hash of
 *   its sources, with a manifest of the files it read (size and mtime), so a restart with nothing
 *   changed imports the cached module without starting esbuild.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Project } from '../define/project.js';

const NAMES = ['tablebase.config.ts', 'tablebase.config.mts', 'tablebase.config.js', 'tablebase.config.mjs'];

/** The definition API of this copy: `src/index.ts` in a checkout, `dist/index.js` when compiled. */
const SELF = new URL(import.meta.url.endsWith('.ts') ? '../index.ts' : '../index.js', import.meta.url).href;

/** The files a cached bundle was made from, so an unchanged project skips esbuild. */
interface Manifest {
  readonly self: string;
  readonly bundle: string;
  readonly inputs: Record<string, string>;
}

const fingerprint = (file: string): string | null => {
  try {
    const s = statSync(file);
    return `${s.size}:${s.mtimeMs}`;
  } catch {
    return null;
  }
};

/** `<project>/node_modules/.cache/tablebase`, or a temporary folder when the project is read-only. */
function cacheDir(dir: string): string {
  for (const candidate of [join(dir, 'node_modules', '.cache', 'tablebase'), join(tmpdir(), 'tablebase-config-cache')]) {
    try {
      mkdirSync(candidate, { recursive: true });
      return candidate;
    } catch {
      // not writable: try the next
    }
  }
  throw new Error(`cannot write a config cache under ${dir} nor ${tmpdir()}`);
}

/** Written to a temporary name and renamed: servers starting together never read half a file. */
function writeAtomic(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

async function bundle(file: string, cache: string, manifestFile: string): Promise<string> {
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: [file],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: 'inline',
    metafile: true,
    logLevel: 'silent',
    plugins: [
      {
        name: 'tablebase-self',
        setup(b) {
          b.onResolve({ filter: /^tablebase$/ }, () => ({ path: SELF, external: true }));
        },
      },
    ],
  });
  const code = result.outputFiles[0]!.text;
  const out = join(cache, `config-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.mjs`);
  if (!existsSync(out)) writeAtomic(out, code);
  const inputs: Record<string, string> = {};
  for (const input of Object.keys(result.metafile.inputs)) {
    const path = resolve(input);
    inputs[path] = fingerprint(path) ?? '';
  }
  writeAtomic(manifestFile, JSON.stringify({ self: SELF, bundle: out, inputs } satisfies Manifest));
  return out;
}

/** The cached bundle when every file it was made from is unchanged, else a fresh one. */
async function bundled(file: string, dir: string): Promise<string> {
  const cache = cacheDir(dir);
  // Keyed by the running copy too: a checkout's sources and its dist/ keep a bundle each.
  const manifestFile = join(cache, `${createHash('sha256').update(`${file}\n${SELF}`).digest('hex').slice(0, 16)}.json`);
  try {
    const m = JSON.parse(readFileSync(manifestFile, 'utf8')) as Manifest;
    if (m.self === SELF && existsSync(m.bundle) && Object.entries(m.inputs).every(([path, print]) => fingerprint(path) === print)) return m.bundle;
  } catch {
    // no manifest yet, or unreadable: bundle
  }
  return bundle(file, cache, manifestFile);
}

export async function loadProject(projectDir: string): Promise<Project> {
  const dir = resolve(projectDir);
  const file = NAMES.map((n) => join(dir, n)).find((f) => existsSync(f));
  if (!file) throw new Error(`No tablebase.config.ts in ${dir}`);
  const code = await bundled(file, dir).catch((err: { errors?: { text: string; location?: { file: string; line: number } | null }[] }) => {
    // esbuild's errors name the file and line: one clear message, no stack.
    const first = err.errors?.[0];
    if (first) throw new Error(`${first.location ? `${first.location.file}:${first.location.line}: ` : ''}${first.text}`);
    throw err;
  });
  const mod = (await import(pathToFileURL(code).href).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ERR_MODULE_NOT_FOUND') throw new Error(`${file}: ${err.message.replace(/ imported from .*$/, '')}: run \`npm install\` in ${dirname(file)}`);
    throw err;
  })) as { default?: unknown };
  const project = mod.default as Project | undefined;
  if (!project || (project as { __tablebaseProject?: unknown }).__tablebaseProject !== true) {
    throw new Error(`${file} must export default defineProject({...})`);
  }
  return project;
}
