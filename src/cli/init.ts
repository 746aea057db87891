/**
 * `tablebase init DIR [--force]` (issue #16 item 3): writes a ready project — config, package.json,
 * tsconfig, README, .gitignore, and `.env` with random secrets (mode 0600) — and links
 * `node_modules/tablebase` to the Tablebase running this command, exactly as `npm install <path>`
 * would, so `npm run dev` (or `tablebase dev --project DIR`) serves it at once, offline.
 * A non-empty folder is refused unless --force; even then no existing file is replaced.
 */
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureDevSecrets } from '../auth/secrets.js';
import { UsageError, type Args } from './args.js';
import { projectFiles } from './init/templates.js';

/** The root of the tablebase package this CLI runs from. */
const PACKAGE_ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** Entries a fresh folder may already hold without counting as "not empty". */
const HARMLESS = new Set(['.git', '.DS_Store']);

export interface InitResult {
  readonly dir: string;
  readonly written: string[];
  readonly kept: string[];
  readonly linked: boolean;
}

export async function init(args: Args): Promise<void> {
  const r = initProject(args.words[0]!, args.flags.force === true);
  const shown = relative(process.cwd(), r.dir) || '.';
  console.log(`Created a Tablebase project in ${r.dir}`);
  for (const f of r.written) console.log(`  + ${f}`);
  for (const f of r.kept) console.log(`  = ${f} (exists, kept)`);
  if (r.linked) console.log(`  + node_modules/tablebase -> ${PACKAGE_ROOT}`);
  console.log(`\nNext:\n  cd ${shown.includes(' ') ? JSON.stringify(shown) : shown}\n  npm run dev        # http://localhost:8080\n  (README.md has the first requests)`);
}

export function initProject(target: string, force: boolean): InitResult {
  const dir = resolve(target);
  if (existsSync(dir)) {
    if (!statSync(dir).isDirectory()) throw new UsageError(`${target} exists and is not a folder`);
    const entries = readdirSync(dir).filter((e) => !HARMLESS.has(e));
    if (entries.length && !force) throw new UsageError(`${target} is not empty; use --force to add the project files (existing files are kept)`);
  }
  mkdirSync(dir, { recursive: true });
  const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string };
  // Installed from a registry: depend on the version; run from a checkout: on the folder, as `npm install <path>` records it.
  const fromRegistry = PACKAGE_ROOT.split(sep).includes('node_modules');
  const files = projectFiles({ name: packageName(basename(dir)), tablebaseSpec: fromRegistry ? `^${pkg.version}` : `file:${PACKAGE_ROOT}` });
  const written: string[] = [];
  const kept: string[] = [];
  for (const [name, text] of files) {
    try {
      writeFileSync(join(dir, name), text, { flag: 'wx' }); // never replace a file the user has
      written.push(name);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      kept.push(name);
    }
  }
  const secrets = ensureDevSecrets(dir, {}, 'tablebase init');
  if (secrets.wrote.length) written.push(secrets.created ? '.env' : `.env (added ${secrets.wrote.join(', ')})`);
  else kept.push('.env');
  const linked = fromRegistry ? false : linkPackage(dir);
  return { dir, written, kept, linked };
}

/** `node_modules/tablebase` and `node_modules/.bin/tablebase`, as npm links a local folder dependency. */
function linkPackage(dir: string): boolean {
  const modules = join(dir, 'node_modules');
  const link = join(modules, 'tablebase');
  if (exists(link)) return false;
  mkdirSync(join(modules, '.bin'), { recursive: true });
  symlinkSync(PACKAGE_ROOT, link, process.platform === 'win32' ? 'junction' : 'dir');
  const bin = join(modules, '.bin', 'tablebase');
  if (!exists(bin) && process.platform !== 'win32') symlinkSync(join('..', 'tablebase', 'bin', 'tablebase.mjs'), bin);
  return true;
}

const exists = (path: string) => {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
};

/** A valid npm package name from a folder name. */
export function packageName(folder: string): string {
  const name = folder
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+|-+$/g, '');
  return name.slice(0, 214) || 'tablebase-app';
}
