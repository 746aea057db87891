/**
 * The generated document (docs/reference/dashboard.md): it validates, lists every collection, hides
 * password, and describes every route of the route table from its declaration.
 */
import { openApiPath } from './context.js';
import SwaggerParser from '@apidevtools/swagger-parser';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../core/errors.js';
import { compileProject } from '../core/model.js';
import { routeTable } from '../http/routes.js';
import project from '../../examples/conformance/tablebase.config.js';
import { kitchenSinkModel } from './fixtures.js';
import { Type } from '@sinclair/typebox';
import { defineRoute } from '../http/declare.js';
import { buildOpenApi, isDashboardPage, toYaml, undocumentedRoutes } from './index.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- walks the generated OpenAPI JSON by path; its shape is what the assertions check
type Any = Record<string, any>;
const conformance = compileProject(project);
const allRoutes = routeTable();
const doc: Any = buildOpenApi(conformance, allRoutes);
const schemas = doc.components.schemas as Any;

const validate = (d: object) => SwaggerParser.validate(structuredClone(d) as never);

describe('validity', () => {
  it('the conformance document passes swagger-parser', async () => {
    await expect(validate(doc)).resolves.toBeTruthy();
  });

  it('a project with every column kind, internal tables and a view passes too', async () => {
    await expect(validate(buildOpenApi(kitchenSinkModel(), allRoutes))).resolves.toBeTruthy();
  });

  it('a project with no tables at all is still valid', async () => {
    const empty = compileProject((await import('../define/index.js')).defineProject({ tables: [] }));
    await expect(validate(buildOpenApi(empty, allRoutes))).resolves.toBeTruthy();
  });

  it('the validator does catch a broken document (the check is not vacuous)', async () => {
    const broken = structuredClone(doc);
    broken.paths['/db'].get.responses['200'].content['application/json'].schema = { $ref: '#/components/schemas/Nope' };
    await expect(validate(broken)).rejects.toThrow();
  });

  it('YAML holds the same document, without anchors', () => {
    const yaml = toYaml(doc);
    expect(yaml).not.toMatch(/^\s*[^#\n]*[&*]a\d+\b/m);
    expect(parse(yaml)).toEqual(JSON.parse(JSON.stringify(doc)));
  });
});

describe('collections (docs/reference/dashboard.md)', () => {
  it('TableName lists every declared table and view, closed ones included', () => {
    const expected = [...project.tables.map((t) => t.name), ...(project.views ?? []).map((v) => v.name)];
    expect(new Set(schemas.TableName.enum)).toEqual(new Set(expected));
    expect(schemas.TableName.enum).toContain('secrets');
    expect(schemas.TableName.enum).toContain('task_board');
  });

  it('internal tables appear only when the project gave them rules', () => {
    const sink = buildOpenApi(kitchenSinkModel(), allRoutes) as Any;
    expect(sink.components.schemas.TableName.enum).toContain('_photos');
    expect(sink.components.schemas.TableName.enum).not.toContain('_sessions');
    expect(sink.components.schemas['_sessions.Row']).toBeUndefined();
  });

  it('list bodies offer one schema per collection, discriminated by its table name', () => {
    const schema = doc.paths['/db/list'].get.parameters[0].content['application/json'].schema;
    expect(Object.keys(schema.discriminator.mapping).sort()).toEqual([...schemas.TableName.enum].sort());
    expect(schemas['tasks.ListBody'].properties.table.enum).toEqual(['tasks']);
    expect(schemas['tasks.ListBody'].properties.order_by.$ref).toBe('#/components/schemas/tasks.OrderBy');
  });

  it('write bodies offer tables only; views get no Create or Update schema', () => {
    const schema = doc.paths['/db'].post.requestBody.content['application/json'].schema;
    expect(Object.keys(schema.discriminator.mapping)).not.toContain('task_board');
    expect(Object.keys(schema.discriminator.mapping)).toContain('secrets');
    expect(schemas['task_board.Create']).toBeUndefined();
    expect(schemas['task_board.Row'].properties.ownerEmail.nullable).toBe(true);
  });

  it('Row, Create, Where and OrderBy never mention password', () => {
    for (const part of ['Row', 'Create', 'Where', 'OrderBy', 'Update']) {
      expect(JSON.stringify(schemas[`users.${part}`]), part).not.toContain('password');
    }
    expect(schemas['users.Row'].required).toEqual(['id', 'email', 'isVerified', 'createdAt', 'updatedAt', 'displayName', 'plan']);
  });

  it('Create requires exactly the columns without a default that are not nullable', () => {
    expect(schemas['tasks.Create'].required).toEqual(['title']);
    expect(Object.keys(schemas['tasks.Create'].properties)).toEqual(['title', 'isComplete', 'priority', 'score', 'ownerId', 'tags']);
    expect(schemas['tasks.Create'].additionalProperties).toBe(false);
  });

  it('Where maps each column to the condition of its kind, with and/or/not', () => {
    const w = schemas['tasks.Where'].properties;
    expect(w.title.$ref).toBe('#/components/schemas/Condition.text');
    expect(w.priority.$ref).toBe('#/components/schemas/Condition.integer');
    expect(w.tags.$ref).toBe('#/components/schemas/Condition.list.text');
    expect(w.completedAt.$ref).toBe('#/components/schemas/Condition.timestamp');
    expect(w.or.items.$ref).toBe('#/components/schemas/tasks.Where');
    expect(Object.keys(schemas['Condition.list.text'].properties)).toEqual(['has', 'isNull']);
    // Only the condition families the project uses are components (no json column here).
    expect(schemas['Condition.json']).toBeUndefined();
    const sink = (buildOpenApi(kitchenSinkModel(), allRoutes) as Any).components.schemas;
    expect(Object.keys(sink['Condition.json'].properties)).toEqual(['isNull']);
  });

  it('null is said the way OpenAPI 3.0 linters accept: nullable beside a type, or a Null alternative', () => {
    const stamp = schemas['Condition.timestamp'].properties.eq;
    expect(stamp.nullable).toBeUndefined();
    expect(stamp.oneOf[0]).toMatchObject({ type: 'string', format: 'date-time', nullable: true });
    expect(stamp.oneOf[1].nullable).toBeUndefined();
    const one = doc.paths['/db/stream'].get.responses['200'].content['application/x-ndjson'].schema.oneOf[0].properties.data;
    expect(one.anyOf.at(-1)).toEqual({ $ref: '#/components/schemas/Null' });
    expect(schemas.Null).toMatchObject({ nullable: true, enum: [null] });
    const nullableSchemas = JSON.stringify(doc).match(/"nullable":true/g)?.length ?? 0;
    expect(nullableSchemas).toBeGreaterThan(0);
    const typeless: string[] = [];
    const walk = (node: unknown, at: string) => {
      if (!node || typeof node !== 'object') return;
      if ((node as Any).nullable === true && typeof (node as Any).type !== 'string') typeless.push(at);
      for (const [k, v] of Object.entries(node)) walk(v, `${at}/${k}`);
    };
    walk(doc, '#');
    expect(typeless).toEqual([]);
  });

  it('Update offers increment/decrement on numbers and add/remove on lists', () => {
    const entries: Any[] = schemas['tasks.Update'].oneOf;
    const forms = (col: string) => entries.find((e) => e.properties.column.enum[0] === col)!.properties.value;
    expect(JSON.stringify(forms('priority'))).toContain('increment');
    expect(JSON.stringify(forms('tags'))).toContain('"add"');
    expect(JSON.stringify(forms('title'))).not.toContain('increment');
    expect(entries.map((e) => e.properties.column.enum[0])).not.toContain('createdAt');
  });
});

describe('routes', () => {
  it('every route of the route table is described, with its summary', () => {
    expect(undocumentedRoutes(doc, allRoutes)).toEqual([]);
    for (const r of routeTable().filter((r) => !isDashboardPage(r.path))) expect(doc.paths[openApiPath(r.path)]?.[r.method.toLowerCase()]?.summary).toBe(r.summary);
  });

  it('a route added to the table is documented from its declaration alone', async () => {
    const extra = defineRoute({
      method: 'GET',
      path: '/dashboard/made-up/:x',
      family: 'dashboard',
      summary: 'Made up',
      access: 'admin',
      params: Type.Object({ x: Type.String() }),
      responses: { 200: Type.Object({ n: Type.Integer() }) },
      handler: () => ({ n: 1 }),
    });
    const d = buildOpenApi(conformance, [...allRoutes, extra]) as Any;
    await expect(validate(d)).resolves.toBeTruthy();
    const op = d.paths['/dashboard/made-up/{x}'].get;
    expect(op.summary).toBe('Made up');
    expect(op.security).toEqual([{ bearerAuth: [] }]);
    expect(op.parameters[0]).toMatchObject({ name: 'x', in: 'path', required: true });
    expect(op.responses['200'].content['application/json'].schema.properties.data.properties.n.type).toBe('integer');
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['400', '401', '403', '500']));
    expect(undocumentedRoutes(doc, [...allRoutes, extra])).toEqual([extra]);
  });

  it('stream routes answer text/event-stream and application/x-ndjson', () => {
    for (const p of ['/db/stream', '/db/stream/list', '/db/stream/count']) {
      expect(Object.keys(doc.paths[p].get.responses['200'].content)).toEqual(['text/event-stream', 'application/x-ndjson']);
    }
  });

  it('custom operations name the registered operations; deletes answer 204', () => {
    expect(doc.paths['/db/custom/{name}'].patch.parameters[0].schema.enum).toEqual(['complete', 'archive', 'bump']);
    expect(doc.paths['/db'].delete.responses['204']).toBeDefined();
    expect(doc.paths['/db'].delete.responses['200']).toBeUndefined();
  });

  it('auth bodies name only auth tables; sign-up objects only signUpFields', () => {
    expect(schemas['users.SignUpBody'].properties.object.properties).toEqual({ displayName: { type: 'string', nullable: true } });
    const signIn = doc.paths['/auth/sign-in'].post.requestBody.content['application/json'].schema;
    expect(signIn.properties.table.enum).toEqual(['users', 'admins']);
  });

  it('public and admin routes declare their security; /db uses the optional global bearer', () => {
    expect(doc.security).toEqual([{}, { bearerAuth: [] }]);
    expect(doc.paths['/swagger.json'].get.security).toEqual([]);
    expect(doc.paths['/health'].get.security).toEqual([]);
    expect(doc.paths['/dashboard/metrics'].get.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('the error envelope lists every code of the catalog', () => {
    expect(schemas.Error.properties.error.properties.code.enum).toEqual(Object.keys(ERROR_STATUS));
    expect(doc.paths['/db'].post.responses['429'].$ref).toBe('#/components/responses/RateLimited');
  });

  it('capped reads and streams document RESPONSE_TOO_LARGE in their 400; other routes do not (docs/reference/data.md)', () => {
    const ref = (method: string, path: string) => doc.paths[path][method].responses['400'].$ref;
    for (const p of ['/db', '/db/list', '/db/stream', '/db/stream/list', '/db/stream/count']) expect(ref('get', p), p).toBe('#/components/responses/BadRequestOrTooLarge');
    for (const [m, p] of [
      ['get', '/db/count'],
      ['post', '/db'],
      ['patch', '/db/many'],
      ['post', '/auth/sign-in'],
    ])
      expect(ref(m!, p!), `${m} ${p}`).toBe('#/components/responses/BadRequest');
    expect(doc.components.responses.BadRequestOrTooLarge.description).toContain('RESPONSE_TOO_LARGE');
    expect(doc.components.responses.BadRequest.description).not.toContain('RESPONSE_TOO_LARGE');
  });

  it('routes that read a JSON body document 413 and 415 (docs/reference/conventions.md); body-less routes neither', () => {
    for (const [m, p] of [
      ['post', '/db'],
      ['get', '/db/list'],
      ['get', '/db/stream'],
      ['post', '/auth/sign-up'],
      ['post', '/img'],
    ]) {
      const responses = doc.paths[p!][m!].responses;
      expect(responses['413']?.$ref, `${m} ${p}`).toBe('#/components/responses/PayloadTooLarge');
      expect(responses['415']?.$ref, `${m} ${p}`).toBe('#/components/responses/UnsupportedMediaType');
    }
    expect(doc.paths['/health'].get.responses['413']).toBeUndefined();
    expect(doc.paths['/health'].get.responses['415']).toBeUndefined();
  });

  it('every operation id is unique and every response carries X-Request-Id', () => {
    const ids: string[] = [];
    for (const item of Object.values(doc.paths) as Any[]) {
      for (const op of Object.values(item) as Any[]) {
        ids.push(op.operationId);
        for (const r of Object.values(op.responses) as Any[]) if (!r.$ref) expect(r.headers['X-Request-Id']).toBeDefined();
      }
    }
    expect(new Set(ids).size).toBe(ids.length);
  });
});
