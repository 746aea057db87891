/**
 * A column a `beforeCreate` hook fills, declared `.filledBy('hook')`, is optional wherever a
 * create is described (issue #27 item 2): the generated client, the OpenAPI create schema and the
 * dashboard's form. Without the declaration it stays required.
 */
import { describe, expect, it } from 'vitest';
import { compileProject } from '../core/model.js';
import { describeSchema } from '../dashboard/schema.js';
import { column, defineProject, table } from '../define/index.js';
import { routeTable } from '../http/routes.js';
import { buildOpenApi } from '../openapi/index.js';
import { generateClient } from './generate.js';

const notes = table('notes', {
  prefix: 'nt',
  columns: { text: column.text(), ownerId: column.text().filledBy('hook'), authorId: column.text() },
  hooks: { beforeCreate: (_ctx, object) => ({ ...object, ownerId: 'someone' }) },
});
const model = compileProject(defineProject({ tables: [notes] }));

describe("filledBy('hook')", () => {
  it('is optional in the generated NotesCreate, unlike a plain required column', () => {
    const code = generateClient(model);
    const create = code.slice(code.indexOf('export interface NotesCreate'), code.indexOf('}', code.indexOf('export interface NotesCreate')));
    expect(create).toContain('ownerId?: string;');
    expect(create).toContain('authorId: string;');
    expect(create).toContain('text: string;');
  });

  it('is not in the OpenAPI create schema’s required list', () => {
    const doc = buildOpenApi(model, routeTable()) as unknown as { components: { schemas: Record<string, { required?: string[] }> } };
    const required = doc.components.schemas['notes.Create']?.required ?? [];
    expect(required).toContain('authorId');
    expect(required).not.toContain('ownerId');
  });

  it('is not required in the dashboard form', () => {
    const cols = describeSchema(model).find((c) => c.name === 'notes')!.columns;
    expect(cols.find((c) => c.name === 'ownerId')!.required).toBe(false);
    expect(cols.find((c) => c.name === 'authorId')!.required).toBe(true);
  });
});
