/** Declarations: a route without its schemas cannot be registered; validation answers docs/reference/conventions.md details. */
import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../core/errors.js';
import type { RequestStream } from '../core/sink.js';
import type { Jwt } from '../define/types.js';
import { defineRoute, empty, noContent, redirect, replyKind, type RouteDeclaration } from './declare.js';

const base = { family: 'system', summary: 's', access: 'public', handler: () => null } as const;

describe('defineRoute', () => {
  it('refuses a route without response schemas', () => {
    expect(() => defineRoute({ ...base, method: 'GET', path: '/x', responses: {} })).toThrow(/declare its responses/);
    expect(() => defineRoute({ ...base, method: 'GET', path: '/x' } as unknown as RouteDeclaration)).toThrow(/declare its responses/);
  });

  it('refuses a POST or PATCH without a body declaration', () => {
    expect(() => defineRoute({ ...base, method: 'POST', path: '/x', responses: { 204: 'done' } })).toThrow(/declare its body/);
    expect(() => defineRoute({ ...base, method: 'PATCH', path: '/x', responses: { 204: 'done' } })).toThrow(/declare its body/);
    expect(() => defineRoute({ ...base, method: 'POST', path: '/x', body: 'none', responses: { 204: 'done' } })).not.toThrow();
  });

  it('refuses a :param path without a params schema naming it', () => {
    expect(() => defineRoute({ ...base, method: 'GET', path: '/img/:id', responses: { 204: 'done' } })).toThrow(/:id/);
    expect(() => defineRoute({ ...base, method: 'GET', path: '/img/:id', params: Type.Object({ other: Type.String() }), responses: { 204: 'done' } })).toThrow(/:id/);
    expect(() => defineRoute({ ...base, method: 'GET', path: '/img/:id', params: Type.Object({ id: Type.String() }), responses: { 204: 'done' } })).not.toThrow();
  });

  it('compiles a body validator that answers 400 with JSON-pointer details', () => {
    const route = defineRoute({
      ...base,
      method: 'POST',
      path: '/x',
      body: Type.Object({ email: Type.String(), n: Type.Optional(Type.Integer()) }, { additionalProperties: false }),
      responses: { 204: 'done' },
    });
    expect(route.validate.body!({ email: 'a' })).toEqual({ email: 'a' });
    let err: unknown;
    try {
      route.validate.body!({ n: 'x', extra: 1 });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiError);
    const e = err as ApiError;
    expect(e.status).toBe(400);
    expect(e.details!.map((d) => d.path).sort()).toEqual(['/email', '/extra', '/n']);
  });

  it('bounds the number of details a hostile body can produce', () => {
    const route = defineRoute({ ...base, method: 'POST', path: '/x', body: Type.Object({}, { additionalProperties: false }), responses: { 204: 'done' } });
    const body = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, i]));
    try {
      route.validate.body!(body);
      expect.unreachable();
    } catch (e) {
      expect((e as ApiError).details!.length).toBeLessThanOrEqual(20);
    }
  });
});

describe('replies', () => {
  it('are told apart from data by a private mark, so any JSON value is still data', () => {
    expect(replyKind(noContent())).toBe('noContent');
    expect(replyKind(empty())).toBe('empty');
    expect(replyKind(redirect('/a'))).toBe('redirect');
    expect(replyKind({ kind: 'noContent' })).toBeUndefined();
    expect(replyKind(null)).toBeUndefined();
  });
});

describe('handler input is typed by the declaration', () => {
  it('gives a bearer or admin handler a token that is never null, and a raw-body handler its source', () => {
    const seen: unknown[] = [];
    const base = { family: 'system', summary: 's', method: 'GET', path: '/t', responses: { 204: 'done' } } as const;
    defineRoute({
      ...base,
      access: 'bearer',
      handler: ({ jwt }) => {
        const j: Jwt = jwt; // compiles: the lifecycle refused the request without a valid token
        seen.push(j);
      },
    });
    defineRoute({
      ...base,
      access: 'optional',
      handler: ({ jwt }) => {
        // @ts-expect-error an optional route's token may be null
        const j: Jwt = jwt;
        seen.push(j);
      },
    });
    defineRoute({
      ...base,
      access: 'public',
      method: 'POST',
      body: 'raw',
      handler: ({ source }) => {
        const s: RequestStream = source; // compiles: a raw-body route always has its unread body
        seen.push(s);
      },
    });
    defineRoute({
      ...base,
      access: 'public',
      method: 'POST',
      body: 'none',
      handler: ({ source }) => {
        // @ts-expect-error no raw body, no source
        const s: RequestStream = source;
        seen.push(s);
      },
    });
    expect(seen).toEqual([]);
  });
});
