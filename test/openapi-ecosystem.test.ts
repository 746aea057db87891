/**
 * End-to-end: the conformance project's /swagger.json among the tools a user already has
 * (issue #16 items 1–2).
 * - `redocly lint` (recommended rules, redocly.yaml): no errors, no warnings.
 * - The same document upgraded to OpenAPI 3.1 (test/helpers/openapi31.ts) needs no judgement
 *   call, and lints and validates as 3.1.
 * - `openapi-typescript` turns it into types; a small `openapi-fetch` program written against
 *   those types compiles under `tsc --strict` and runs against the live server: a create, a
 *   list, and a 400 the types cannot prevent.
 */
import SwaggerParser from '@apidevtools/swagger-parser';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { typecheck } from '../src/client/typecheck.js';
import { routeTable } from '../src/http/routes.js';
import { buildOpenApi } from '../src/openapi/index.js';
import { kitchenSinkModel } from '../src/openapi/fixtures.js';
import { upgradeTo31 } from './helpers/openapi31.js';
import { ROOT, startServer, type Row, type TestServer } from './helpers/server.js';

type Json = Record<string, unknown>;
/** The parts of the served document the tests below read by name. */
type Doc = Json & { info: { license?: { name: string } }; servers?: unknown[] };

const node = (args: string[], cwd: string) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((res) =>
    execFile(process.execPath, args, { cwd, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => res({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr })),
  );

interface LintProblem {
  ruleId: string;
  severity: string;
  message: string;
  location: { pointer: string }[];
}

/** `redocly lint --format json` with the repository's redocly.yaml; every problem as one line. */
async function redoclyLint(file: string): Promise<string[]> {
  const r = await node([join(ROOT, 'node_modules/@redocly/cli/bin/cli.js'), 'lint', '--config', join(ROOT, 'redocly.yaml'), '--format', 'json', file], dir);
  const start = r.stdout.indexOf('{');
  if (start < 0) throw new Error(`redocly printed no report:\n${r.stdout}\n${r.stderr}`);
  const report = JSON.parse(r.stdout.slice(start)) as { totals: { errors: number; warnings: number }; problems: LintProblem[] };
  return report.problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);
}

let s: TestServer;
let dir: string;
let doc: Doc;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tb-openapi-eco-'));
  // The round-trip program imports openapi-fetch the way a project with it installed does.
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  s = await startServer();
  const r = await s.call<Doc>('GET', '/swagger.json');
  expect(r.status).toBe(200);
  doc = r.json;
  writeFileSync(join(dir, 'swagger.json'), r.text);
}, 180_000);
afterAll(async () => {
  await s?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('OpenAPI document in the ecosystem', () => {
  it('passes redocly lint with the recommended rules: 0 errors, 0 warnings', async () => {
    expect(await redoclyLint(join(dir, 'swagger.json'))).toEqual([]);
  });

  it('a project with every column kind, internal tables with rules and a view lints clean too', async () => {
    const sink = buildOpenApi(kitchenSinkModel(), routeTable(), { serverUrl: '/' });
    writeFileSync(join(dir, 'sink.json'), JSON.stringify(sink));
    // The fixture declares no license, so it gets the default `{ name: 'Proprietary' }`, which has no URL.
    expect(await redoclyLint(join(dir, 'sink.json'))).toEqual(['warn info-license-strict at #/info/license/url: License object should contain `url` field.']);
  });

  it('has a license, servers, and a 4xx answer on every operation', () => {
    expect(doc.openapi).toBe('3.0.3');
    expect(doc.info.license?.name).toBeTruthy();
    expect(doc.servers?.length).toBeGreaterThan(0);
    const missing = Object.entries(doc.paths as Json).flatMap(([path, item]) =>
      Object.entries(item as Json)
        .filter(([, op]) => !Object.keys((op as Json).responses ?? {}).some((code) => /^4(\d\d|XX)$/.test(code)))
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    expect(missing).toEqual([]);
    // redocly.yaml turns operation-2xx-response off for the redirect-only OAuth routes, and
    // /db/live answers 101 (a WebSocket); every other operation must still document a 2XX.
    const no2xx = Object.entries(doc.paths as Json).flatMap(([path, item]) =>
      Object.entries(item as Json)
        .filter(([, op]) => !Object.keys((op as Json).responses ?? {}).some((code) => /^2(\d\d|XX)$/.test(code)))
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    expect(no2xx.sort()).toEqual(['GET /auth/oauth/{provider}/callback', 'GET /auth/oauth/{provider}/start', 'GET /db/live', 'POST /auth/oauth/{provider}/callback']);
  });

  it('converts to OpenAPI 3.1 with nothing left to judgement, and the result lints and validates as 3.1', async () => {
    const { doc: doc31, problems } = upgradeTo31(doc);
    expect(problems).toEqual([]);
    writeFileSync(join(dir, 'swagger-3.1.json'), JSON.stringify(doc31));
    expect(await redoclyLint(join(dir, 'swagger-3.1.json'))).toEqual([]);
    await SwaggerParser.validate(structuredClone(doc31) as never);
  });
});

/** Written against the generated `paths` type; every line is type-checked before it runs. */
const PROGRAM = `import createClient from 'openapi-fetch';
import type { components, paths } from './api.js';

type ListBody = components['schemas']['tasks.ListBody'];

export async function roundTrip(baseUrl: string, marker: string) {
  const api = createClient<paths>({ baseUrl });
  const created = await api.POST('/db', { body: { table: 'tasks', object: { title: marker, priority: 3, tags: ['openapi'] } } });
  if (!created.data) throw new Error('create failed: ' + JSON.stringify(created.error));
  const row = created.data.data;
  // GET routes take their JSON in one \`body\` query parameter (docs/reference/conventions.md); openapi-typescript types
  // a JSON query parameter as its string form, so the body is typed from its schema, then encoded.
  const list: ListBody = { table: 'tasks', where: { title: { eq: marker } }, limit: 10 };
  const listed = await api.GET('/db/list', { params: { query: { body: JSON.stringify(list) } } });
  if (!listed.data) throw new Error('list failed: ' + JSON.stringify(listed.error));
  const page = listed.data.data;
  // Over the maximum limit: the types allow any number, the server answers 400 with the envelope.
  const tooMany: ListBody = { table: 'tasks', limit: 5000 };
  const refused = await api.GET('/db/list', { params: { query: { body: JSON.stringify(tooMany) } } });
  return { row, total: page.total, items: page.items, refused: { status: refused.response.status, code: refused.error?.error.code } };
}
`;

describe('openapi-typescript + openapi-fetch round trip', () => {
  it('generates types, compiles a typed program with tsc --strict, and runs it against the server', async () => {
    // --default-non-nullable false: request bodies declare defaults (limit 100, offset 0) that the
    // server fills in; with openapi-typescript's default, a typed body would have to repeat them.
    const gen = await node([join(ROOT, 'node_modules/openapi-typescript/bin/cli.js'), join(dir, 'swagger.json'), '-o', join(dir, 'api.d.ts'), '--default-non-nullable', 'false'], dir);
    expect(gen.code, gen.stderr).toBe(0);
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n');
    writeFileSync(join(dir, 'program.ts'), PROGRAM);
    const tsc = await typecheck(dir, ['program.ts']);
    expect(tsc.code, tsc.output).toBe(0);

    const { roundTrip } = (await import(pathToFileURL(join(dir, 'program.ts')).href)) as {
      roundTrip: (base: string, marker: string) => Promise<{ row: Row; total: number; items: Row[]; refused: unknown }>;
    };
    const marker = `openapi-fetch ${Date.now()}`;
    const r = await roundTrip(s.base, marker);
    expect(r.row).toMatchObject({ title: marker, priority: 3, tags: ['openapi'], isComplete: false });
    expect(r.row.id).toMatch(/^tk_/);
    expect(r.total).toBe(1);
    expect(r.items).toEqual([r.row]);
    expect(r.refused).toEqual({ status: 400, code: 'BAD_REQUEST' });
  }, 120_000);
});
