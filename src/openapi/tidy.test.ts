import { describe, expect, it } from 'vitest';
import { ensureClientError, pruneUnused } from './tidy.js';
import { orNull } from './values.js';

describe('ensureClientError', () => {
  it('adds 400 only to operations that name no 4xx answer', () => {
    const doc = { paths: { '/a': { get: { responses: { '200': {} } }, post: { responses: { '200': {}, '404': {} } } } }, components: {} };
    ensureClientError(doc);
    expect(Object.keys(doc.paths['/a'].get.responses)).toEqual(['200', '400']);
    expect(Object.keys(doc.paths['/a'].post.responses)).toEqual(['200', '404']);
  });
});

describe('pruneUnused', () => {
  it('keeps what paths reach (through refs and discriminator mappings) and drops the rest', () => {
    const ref = (n: string) => ({ $ref: `#/components/schemas/${n}` });
    const doc = {
      paths: { '/a': { get: { responses: { '200': { $ref: '#/components/responses/Ok' } } } } },
      components: {
        responses: { Ok: { content: { 'application/json': { schema: { oneOf: [ref('A')], discriminator: { propertyName: 't', mapping: { b: '#/components/schemas/B' } } } } } }, Unused: {} },
        schemas: { A: { properties: { c: ref('C~1x') } }, B: {}, 'C/x': {}, D: { properties: { a: ref('A') } } },
        headers: { H: {} },
        securitySchemes: { bearerAuth: {} },
      },
    };
    pruneUnused(doc);
    expect(Object.keys(doc.components.schemas)).toEqual(['A', 'B', 'C/x']);
    expect(Object.keys(doc.components.responses)).toEqual(['Ok']);
    expect(doc.components).not.toHaveProperty('headers');
    expect(doc.components.securitySchemes).toEqual({ bearerAuth: {} });
  });
});

describe('orNull', () => {
  it('widens a typed schema, the first typed alternative, or adds the Null alternative', () => {
    expect(orNull({ type: 'string' })).toEqual({ type: 'string', nullable: true });
    expect(orNull({ type: 'string', enum: ['a'] })).toEqual({ type: 'string', nullable: true, enum: ['a', null] });
    expect(orNull({ oneOf: [{ type: 'string' }, { type: 'integer' }] })).toEqual({ oneOf: [{ type: 'string', nullable: true }, { type: 'integer' }] });
    expect(orNull({ anyOf: [{ $ref: '#/x' }] })).toEqual({ anyOf: [{ $ref: '#/x' }, { $ref: '#/components/schemas/Null' }] });
    expect(orNull({ $ref: '#/x' })).toEqual({ anyOf: [{ $ref: '#/x' }, { $ref: '#/components/schemas/Null' }] });
    expect(orNull({ description: 'anything' })).toEqual({ description: 'anything' });
  });
});
