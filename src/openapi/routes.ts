/**
 * `GET /swagger.json` and `GET /swagger.yaml` (SPEC §11): public, generated once per start from
 * the running app's project and route table, then served from memory. The document's server is
 * `/`, i.e. wherever it was fetched from, so it stays right behind proxies and on any port.
 */
import type { App } from '../core/app.js';
import type { RequestContext } from '../http/context.js';
import { sendJson } from '../http/respond.js';
import { buildOpenApi, toYaml } from './index.js';

interface Rendered {
  readonly json: string;
  readonly yaml: string;
}

const cache = new WeakMap<App, Rendered>();

/** The app's document, built on first use and kept for the app's lifetime. */
export function renderedDocument(app: App): Rendered {
  let r = cache.get(app);
  if (!r) {
    const doc = buildOpenApi(app.rt.model, app.router.routes, { serverUrl: '/' });
    r = Object.freeze({ json: JSON.stringify(doc), yaml: toYaml(doc) });
    cache.set(app, r);
  }
  return r;
}

export function swaggerJson(ctx: RequestContext): void {
  sendJson(ctx.res, 200, renderedDocument(ctx.app).json);
}

export function swaggerYaml(ctx: RequestContext): void {
  const body = renderedDocument(ctx.app).yaml;
  ctx.res.writeHead(200, { 'content-type': 'text/yaml; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  ctx.res.end(body);
}
