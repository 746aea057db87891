/**
 * GET /_ and everything under /_/ (docs/reference/dashboard.md): the dashboard's single page and its bundled
 * assets, from memory. Every screen's URL answers the same page (the app routes on the client),
 * so deep links and reloads work. Headers: a strict CSP with no inline script or style and no
 * other origin, and no framing at all (`X-Frame-Options: DENY`, `frame-ancestors 'none'`).
 */
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../core/errors.js';
import type { DashboardAssets } from '../../dashboard/assets.js';
import { defineRoute, raw } from '../declare.js';

export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob: data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': DASHBOARD_CSP,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

type Headers = Readonly<Record<string, string | string[] | undefined>>;

/** `assets/app.js` and `assets/app.css` are files; every other path is a screen: the page. */
function answer(assets: DashboardAssets, path: string | undefined, headers: Headers) {
  const asset = path?.startsWith('assets/') ? path.slice('assets/'.length) : undefined;
  if (asset !== undefined && !/^app\.(js|css)$/.test(asset)) throw new ApiError('NOT_FOUND', 'No such asset');
  const file = assets.files.get(asset ?? 'index.html')!;
  const common = {
    ...SECURITY_HEADERS,
    // Assets are fingerprinted by `?v=` in the page; the page itself is revalidated every time.
    'cache-control': asset ? 'public, max-age=31536000, immutable' : 'no-cache',
    etag: file.etag,
    vary: 'accept-encoding',
  };
  if (headers['if-none-match'] === file.etag) return raw(304, common, '');
  const gzip = /\bgzip\b/.test(String(headers['accept-encoding'] ?? ''));
  return raw(200, { ...common, 'content-type': file.type, ...(gzip ? { 'content-encoding': 'gzip' } : {}) }, gzip ? file.gzip : file.body);
}

const DESCRIPTION =
  "Any screen URL answers the single-page app; /_/assets/app.js and /_/assets/app.css are its bundle. Sent with a strict Content-Security-Policy, X-Frame-Options: DENY and frame-ancestors 'none'.";
const RESPONSES = { 200: { description: 'The page (text/html) or an asset', content: { 'text/html': Type.String() } }, 304: 'Not modified' } as const;

// `/_` itself, and `/_/<anything>` through the router's tail wildcard (no `/_/` entry: OpenAPI
// linters reject a trailing slash, and the app links to `/_` itself).
export const dashboardPageRoutes = [
  defineRoute({
    method: 'GET',
    path: '/_',
    family: 'dashboard',
    summary: 'The admin dashboard (HTML)',
    description: DESCRIPTION,
    operationId: 'dashboardPage',
    access: 'public',
    responses: RESPONSES,
    errors: ['NOT_FOUND'],
    handler: async ({ headers }, s) => answer(await s.dashboard.assets(), undefined, headers),
  }),
  defineRoute({
    method: 'GET',
    path: '/_/:path*',
    family: 'dashboard',
    summary: 'A dashboard screen (the same page) or one of its assets',
    description: `${DESCRIPTION} The path may have any number of segments, e.g. /_/tables/tasks.`,
    operationId: 'dashboardScreen',
    access: 'public',
    params: Type.Object({ path: Type.String({ maxLength: 512, description: 'the screen path, one or more segments' }) }),
    responses: RESPONSES,
    errors: ['NOT_FOUND'],
    handler: async ({ params, headers }, s) => answer(await s.dashboard.assets(), params.path, headers),
  }),
];
