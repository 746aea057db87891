/**
 * The published document is written for the API's users (issue #27 item 7): no citation of files
 * they do not have ("docs/reference/live.md", "(seed, Data operations)"), and not the dashboard's own HTML pages.
 */
import { describe, expect, it } from 'vitest';
import { routeTable } from '../http/routes.js';
import { kitchenSinkModel } from './fixtures.js';
import { buildOpenApi, userFacing } from './index.js';

describe('user-facing descriptions', () => {
  const doc = buildOpenApi(kitchenSinkModel(), routeTable());
  const text = JSON.stringify(doc);

  it('cite no file of the repository (docs/reference/…) and no seed document', () => {
    expect(text).not.toMatch(/SPEC|\bseed\b|docs\/reference\//); // an RFC's § stays: those are public
  });

  it('list no dashboard page (/_), only its API under /dashboard/', () => {
    expect(Object.keys(doc.paths).filter((p) => p === '/_' || p.startsWith('/_/'))).toEqual([]);
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/dashboard/'))).toBe(true);
  });

  it('drop a citation and keep the sentence', () => {
    expect(userFacing('not equal; null counts as a value (docs/reference/where.md)')).toBe('not equal; null counts as a value');
    expect(userFacing('No match is 404 (docs/reference/data.md). Rule: canView.')).toBe('No match is 404. Rule: canView.');
    expect(userFacing('Table operations (seed, Data operations)')).toBe('Table operations');
    expect(userFacing('a plain sentence (with a remark).')).toBe('a plain sentence (with a remark).');
  });
});
