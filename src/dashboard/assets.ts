/**
 * The dashboard's browser assets (docs/reference/dashboard.md): the TypeScript/Preact sources under `ui/` bundled by
 * esbuild, kept in memory with gzip copies and ETags; nothing is fetched from any other origin.
 * The installed package ships them prebuilt (`npm run build` writes `dist/dashboard/prebuilt/`,
 * see docs/reference/dashboard.md), read on the first dashboard request so a start pays nothing;
 * a checkout without a build bundles them with esbuild instead, so development needs no build step.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

export interface Asset {
  readonly body: Buffer;
  readonly gzip: Buffer;
  readonly type: string;
  readonly etag: string;
}

export interface DashboardAssets {
  /** `index.html`, `app.js`, `app.css` by file name. */
  readonly files: ReadonlyMap<string, Asset>;
  /** Milliseconds the bundling took. */
  readonly buildMs: number;
}

const UI_DIR = join(import.meta.dirname, 'ui');
/** Where the build writes app.js and app.css next to the compiled dashboard. */
const PREBUILT_DIR = join(import.meta.dirname, 'prebuilt');

/** True when this copy runs with the bundle prebuilt (the compiled package). */
export function dashboardPrebuilt(): boolean {
  return existsSync(join(PREBUILT_DIR, 'app.js'));
}

function asset(body: Buffer, type: string): Asset {
  return { body, gzip: gzipSync(body, { level: 9 }), type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
}

/** What the sign-in page tells someone who has no admin yet (issue #27 item 4). */
export interface SignInHelp {
  /** The exact `admin create` command, when the project has an admin table. */
  readonly adminCommand?: string | undefined;
  /** The declaration to add when it has none. */
  readonly adminTableSnippet?: string;
}

const attr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The page: no inline script or style, so the CSP can forbid both. */
function indexHtml(js: Asset, css: Asset, adminTables: readonly string[], help: SignInHelp): string {
  const v = (a: Asset) => encodeURIComponent(a.etag.slice(1, 9));
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Tablebase dashboard</title>
<meta name="tablebase-admin-tables" content="${adminTables.map((t) => t.replace(/[^a-z0-9_]/g, '')).join(' ')}">
<meta name="tablebase-admin-command" content="${attr(help.adminCommand ?? '')}">
<meta name="tablebase-admin-table-snippet" content="${attr(help.adminTableSnippet ?? '')}">
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/_/assets/app.css?v=${v(css)}">
<script type="module" src="/_/assets/app.js?v=${v(js)}"></script>
</head>
<body><div id="app"></div></body>
</html>
`;
}

/** Bundles the UI sources under `uiDir` (default: the checkout's `ui/`) into one script and one style sheet. */
export async function bundleDashboard(uiDir = UI_DIR): Promise<{ js: Buffer; css: Buffer }> {
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: { app: join(uiDir, 'main.tsx') },
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['chrome110', 'firefox110', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    write: false,
    outdir: '/dashboard-assets',
    logLevel: 'silent',
    legalComments: 'none',
    // The UI type-checks against its own tsconfig (ui/tsconfig.json); esbuild only strips types.
    tsconfigRaw: { compilerOptions: { jsx: 'react-jsx', jsxImportSource: 'preact' } },
  });
  const find = (ext: string) => {
    const f = result.outputFiles.find((o) => o.path.endsWith(ext));
    if (!f) throw new Error(`dashboard bundle produced no ${ext}`);
    return Buffer.from(f.contents);
  };
  return { js: find('.js'), css: find('.css') };
}

/** `adminTables` go into the page as a meta tag (not a script), so the sign-in form can offer them. */
export async function buildDashboardAssets(adminTables: readonly string[], help: SignInHelp = {}): Promise<DashboardAssets> {
  const started = performance.now();
  const bundle = dashboardPrebuilt() ? { js: readFileSync(join(PREBUILT_DIR, 'app.js')), css: readFileSync(join(PREBUILT_DIR, 'app.css')) } : await bundleDashboard();
  const js = asset(bundle.js, 'text/javascript; charset=utf-8');
  const css = asset(bundle.css, 'text/css; charset=utf-8');
  const html = asset(Buffer.from(indexHtml(js, css, adminTables, help)), 'text/html; charset=utf-8');
  return {
    files: new Map([
      ['index.html', html],
      ['app.js', js],
      ['app.css', css],
    ]),
    buildMs: Math.round(performance.now() - started),
  };
}
