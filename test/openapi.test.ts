/**
 * End-to-end: the served OpenAPI document of the conformance project (docs/reference/dashboard.md). The
 * route list to check against comes from a real app assembled in-process with `createApp`, so
 * a route any engineer adds to the server is listed here.
 */
import SwaggerParser from '@apidevtools/swagger-parser';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/server/app.js';
import { resolveConfig } from '../src/core/config.js';
import { createLogger } from '../src/core/logger.js';
import type { Route } from '../src/http/routes.js';
import { isDashboardPage, undocumentedRoutes } from '../src/openapi/index.js';
import { openApiPath } from '../src/openapi/context.js';
import project from '../examples/conformance/tablebase.config.js';
import { ROOT, secret, startServer, type TestServer } from './helpers/server.js';

type Any = Record<string, unknown>;
/** The parts of the served document the tests below read by name. */
type Doc = Any & { paths: Record<string, Record<string, unknown>>; components: { schemas: { TableName: { enum: string[] } } } };

/**
 * The route table of a real app for the conformance project (no server listening), and whether
 * its document is built once per start: two reads answer the very same object (a document built
 * per request would be equal but not the same, and this would fail).
 */
async function appRoutes(): Promise<{ routes: readonly Route[]; builtOnce: boolean }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tb-openapi-routes-'));
  const config = resolveConfig({ project: join(ROOT, 'examples/conformance'), data: dataDir }, {}, project, { jwtSecret: secret(), passwordSecret: secret() });
  const app = await createApp(project, config, { migrate: 'apply', log: createLogger('silent') });
  try {
    const first = await app.services.openapi();
    const again = await app.services.openapi();
    return { routes: app.router.routes, builtOnce: first === again && first.json === again.json };
  } finally {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const operations = (doc: Any): string[] => Object.entries(doc.paths as Any).flatMap(([path, item]) => Object.keys(item as Any).map((m) => `${m.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`));

let s: TestServer;
let routes: readonly Route[];
let builtOnce = false;
beforeAll(async () => {
  let app: Awaited<ReturnType<typeof appRoutes>>;
  [s, app] = await Promise.all([startServer(), appRoutes()]);
  ({ routes, builtOnce } = app);
});
afterAll(async () => {
  await s?.dispose();
});

describe('GET /swagger.json and /swagger.yaml', () => {
  let doc: Doc;
  beforeAll(async () => {
    const r = await s.call<Doc>('GET', '/swagger.json');
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    doc = r.json;
  });

  it('is public and passes swagger-parser', async () => {
    expect(doc.openapi).toBe('3.0.3');
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy();
  });

  it('is served as text/yaml too, the same document', async () => {
    const r = await s.call('GET', '/swagger.yaml');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/yaml/);
    expect(parse(r.text)).toEqual(doc);
  });

  it('is generated once per start: the app hands out one document, and two fetches give identical bytes', async () => {
    expect(builtOnce).toBe(true);
    const [a, b] = await Promise.all([s.call('GET', '/swagger.json'), s.call('GET', '/swagger.json')]);
    expect(a.text).toBe(b.text);
  });

  it("describes every route of the server's route table but the dashboard's own pages, and no route it does not serve", () => {
    expect(routes.length).toBeGreaterThan(10);
    expect(undocumentedRoutes(doc, routes).map((r) => `${r.method} ${r.path}`)).toEqual([]);
    const documented = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`));
    expect(new Set(documented)).toEqual(new Set(routes.filter((r) => !isDashboardPage(r.path)).map((r) => `${r.method} ${openApiPath(r.path)}`)));
  });

  it('lists every declared table and view in the table enum, closed ones included', () => {
    const names = doc.components.schemas.TableName.enum;
    for (const n of ['users', 'admins', 'tasks', 'notes', 'secrets', 'events', 'audit', 'chain', 'limited', 'big', 'cron_log', 'task_board']) expect(names).toContain(n);
    expect(names).not.toContain('_photos'); // the conformance project gives _photos no table rules
  });

  it('covers every route of the reference (data, stream, auth, photos, health, metrics, email, swagger)', () => {
    const served = new Set(operations(doc));
    // docs/reference/data.md, docs/reference/live.md, docs/reference/auth.md, docs/reference/photos.md, docs/reference/dashboard.md. The admin dashboard page (GET /_) is not built yet.
    const spec = [
      ...[
        'GET /db',
        'GET /db/list',
        'GET /db/count',
        'POST /db',
        'POST /db/many',
        'PATCH /db',
        'PATCH /db/many',
        'DELETE /db',
        'DELETE /db/many',
        'PATCH /db/custom/:name',
        'PATCH /db/custom/:name/many',
      ],
      ...['GET /db/stream', 'GET /db/stream/list', 'GET /db/stream/count', 'POST /img', 'GET /img/:id', 'DELETE /img/:id'],
      ...['sign-up', 'sign-in', 'verify-email', 'confirm', 'reset-password', 'refresh', 'logout'].map((p) => `POST /auth/${p}`),
      ...['GET /dashboard/metrics', 'POST /email', 'GET /swagger.json', 'GET /swagger.yaml', 'GET /health'],
    ];
    expect(spec.filter((k) => !served.has(k))).toEqual([]);
  });
});

describe('tablebase openapi', () => {
  const cli = (...args: string[]) =>
    new Promise<{ code: number; stdout: string }>((res) =>
      execFile(
        process.execPath,
        [join(ROOT, 'bin/tablebase.mjs'), 'openapi', '--project', join(ROOT, 'examples/conformance'), ...args],
        { cwd: ROOT, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
        (err, stdout) => res({ code: err ? 1 : 0, stdout }),
      ),
    );

  it('prints a valid document as JSON, and as YAML with --format yaml', async () => {
    const [j, y] = await Promise.all([cli(), cli('--format', 'yaml', '--port', '9999')]);
    expect(j.code).toBe(0);
    const doc = JSON.parse(j.stdout);
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeTruthy();
    expect(doc.servers).toEqual([{ url: 'http://localhost:8080' }]);
    expect(undocumentedRoutes(doc, routes)).toEqual([]);
    const fromYaml = parse(y.stdout);
    expect(fromYaml.servers).toEqual([{ url: 'http://localhost:9999' }]);
    expect(fromYaml.paths).toEqual(doc.paths);
  });
});
