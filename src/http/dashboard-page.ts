/**
 * GET /_ and everything under /_/ (SPEC §11, §11a): the dashboard's single page and its bundled
 * assets, from memory. Every screen's URL answers the same page (the app routes on the client),
 * so deep links and reloads work. Headers: a strict CSP with no inline script or style and no
 * other origin, and no framing at all (`X-Frame-Options: DENY`, `frame-ancestors 'none'`).
 */
import { ApiError } from '../core/errors.js';
import type { RequestContext } from './context.js';

export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob: data:",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const ASSET = /^\/_\/assets\/(app\.(?:js|css))$/;

export async function dashboardPage(ctx: RequestContext): Promise<void> {
  const { files } = await ctx.app.dashboard.assets();
  const m = ASSET.exec(ctx.path);
  if (ctx.path.startsWith('/_/assets/') && !m) throw new ApiError('NOT_FOUND', 'No such asset');
  const file = files.get(m ? m[1]! : 'index.html')!;
  const res = ctx.res;
  res.setHeader('content-security-policy', DASHBOARD_CSP);
  res.setHeader('x-frame-options', 'DENY');
  res.setHeader('x-content-type-options', 'nosniff');
  res.setHeader('referrer-policy', 'no-referrer');
  res.setHeader('cross-origin-opener-policy', 'same-origin');
  res.setHeader('cross-origin-resource-policy', 'same-origin');
  // Assets are fingerprinted by `?v=` in the page; the page itself is revalidated every time.
  res.setHeader('cache-control', m ? 'public, max-age=31536000, immutable' : 'no-cache');
  res.setHeader('etag', file.etag);
  res.setHeader('vary', 'accept-encoding');
  if (ctx.req.headers['if-none-match'] === file.etag) {
    res.writeHead(304);
    res.end();
    return;
  }
  const gzip = /\bgzip\b/.test(String(ctx.req.headers['accept-encoding'] ?? ''));
  const body = gzip ? file.gzip : file.body;
  res.writeHead(200, { 'content-type': file.type, 'content-length': body.length, ...(gzip ? { 'content-encoding': 'gzip' } : {}) });
  res.end(body);
}
