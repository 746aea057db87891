import { describe, expect, it } from 'vitest';
import { compileProject } from '../core/model.js';
import project from '../../examples/conformance/tablebase.config.js';
import { internalTables } from '../server/app.js';
import { describeSchema } from './schema.js';

describe('describeSchema', () => {
  const schema = describeSchema(compileProject(project, internalTables(project)));
  const byName = new Map(schema.map((c) => [c.name, c]));

  it('lists tables (internal ones included) before views', () => {
    expect(schema.at(-1)!.name).toBe('task_board');
    expect(byName.get('_sessions')!.internal).toBe(true);
    expect(byName.get('admins')!.auth).toEqual({ admin: true });
    expect(byName.get('users')!.auth).toEqual({ admin: false });
  });

  it('gives each column its kind, nullability, default and whether it is required or managed', () => {
    const cols = new Map(byName.get('tasks')!.columns.map((c) => [c.name, c]));
    expect(cols.get('title')).toMatchObject({ kind: 'text', required: true, nullable: false, managed: false });
    expect(cols.get('isComplete')).toMatchObject({ kind: 'boolean', required: false, hasDefault: true, default: false });
    expect(cols.get('ownerId')).toMatchObject({ nullable: true, required: false });
    expect(cols.get('tags')).toMatchObject({ kind: 'list', of: 'text', sortable: false, default: [] });
    expect(cols.get('completedAt')).toMatchObject({ kind: 'updatedWhen', watches: 'isComplete', managed: true });
    expect(cols.get('id')).toMatchObject({ managed: true, required: false });
  });

  it('never lists a password column, and view columns are never required', () => {
    expect(byName.get('users')!.columns.map((c) => c.kind)).not.toContain('password');
    expect(byName.get('task_board')!.columns.every((c) => !c.required)).toBe(true);
    expect(byName.get('task_board')!.reads).toEqual(['tasks', 'users']);
  });
});
