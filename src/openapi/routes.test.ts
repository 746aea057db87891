/**
 * The /swagger.json and /swagger.yaml handlers (SPEC §11): content types, one document per app
 * generated once, built from that app's model and route table.
 */
import SwaggerParser from '@apidevtools/swagger-parser';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import type { App } from '../core/app.js';
import { compileProject } from '../core/model.js';
import type { RequestContext } from '../http/context.js';
import { routeTable } from '../http/routes.js';
import project from '../../examples/conformance/tablebase.config.js';
import { kitchenSinkModel } from './fixtures.js';
import { renderedDocument, swaggerJson, swaggerYaml } from './routes.js';

interface Captured {
  status: number;
  headers: Record<string, string | number>;
  body: string;
}

function fakeApp(model = compileProject(project)): App {
  return { rt: { model }, router: { routes: routeTable() } } as unknown as App;
}

function call(handler: (ctx: RequestContext) => void, app: App): Captured {
  const out: Captured = { status: 0, headers: {}, body: '' };
  const res = {
    setHeader: (k: string, v: string) => void (out.headers[k.toLowerCase()] = v),
    writeHead: (status: number, headers: Record<string, string | number> = {}) => {
      out.status = status;
      for (const [k, v] of Object.entries(headers)) out.headers[k.toLowerCase()] = v;
    },
    end: (body?: string) => void (out.body = body ?? ''),
  };
  handler({ res, app } as unknown as RequestContext);
  return out;
}

describe('swagger routes', () => {
  it('GET /swagger.json answers the app\'s document as application/json, valid, served from "/"', async () => {
    const r = call(swaggerJson, fakeApp());
    expect(r.status).toBe(200);
    expect(String(r.headers['content-type'])).toMatch(/^application\/json/);
    expect(r.headers['content-length']).toBe(Buffer.byteLength(r.body));
    const doc = JSON.parse(r.body);
    expect(doc.servers).toEqual([{ url: '/' }]);
    expect(Object.keys(doc.paths)).toContain('/db/custom/{name}');
    await expect(SwaggerParser.validate(doc)).resolves.toBeTruthy();
  });

  it('GET /swagger.yaml answers the same document as text/yaml', () => {
    const app = fakeApp();
    const y = call(swaggerYaml, app);
    expect(y.status).toBe(200);
    expect(String(y.headers['content-type'])).toMatch(/^text\/yaml/);
    expect(parse(y.body)).toEqual(JSON.parse(call(swaggerJson, app).body));
  });

  it("generates once per app, and each app gets its own project's document", () => {
    const a = fakeApp();
    const b = fakeApp(kitchenSinkModel());
    const first = renderedDocument(a);
    expect(renderedDocument(a)).toBe(first);
    expect(call(swaggerJson, a).body).toBe(first.json);
    const other = JSON.parse(renderedDocument(b).json);
    expect(other.components.schemas.TableName.enum).toContain('things');
    expect(JSON.parse(first.json).components.schemas.TableName.enum).not.toContain('things');
  });
});
