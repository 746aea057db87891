import { describe, expect, it } from 'vitest';
import { compileProject } from '../core/model.js';
import { authTable, column, defineProject, table, view, type ProjectDefinition, type TablePolicies } from '../define/index.js';
import { createPolicyResolver, DEFAULT_POLICY, PHOTOS_TABLE } from './policy.js';

const anyone = () => true;

function model(policies: TablePolicies = {}, extra: Partial<ProjectDefinition> = {}) {
  const tasks = table('tasks', {
    prefix: 'tk',
    columns: { title: column.text() },
    rules: { canList: anyone, custom: { complete: anyone, archive: anyone } },
    policies,
  });
  const users = authTable('users', { prefix: 'us', columns: {}, policies: { signIn: { maxRequests: 5, window: '1m' }, signUp: null } });
  const board = view('board', { from: tasks, select: { id: tasks.col('id'), title: tasks.col('title') }, policies: { list: null } });
  return compileProject(defineProject({ tables: [tasks, users], views: [board], ...extra }));
}

describe('createPolicyResolver', () => {
  it('applies table overrides, null and the default', () => {
    const r = createPolicyResolver(model({ list: { maxRequests: 3, window: '10s' }, delete: null }));
    expect(r.resolve('tasks', 'list')).toMatchObject({ maxRequests: 3, windowMs: 10_000 });
    expect(r.resolve('tasks', 'delete')).toBeNull();
    expect(r.resolve('tasks', 'get')).toMatchObject(DEFAULT_POLICY);
    expect(r.resolve('tasks', 'create')).toMatchObject({ maxRequests: 100, windowMs: 60_000 });
  });

  it('gives every (table, op) its own route prefix and answers the same object each time', () => {
    const r = createPolicyResolver(model());
    const get = r.resolve('tasks', 'get')!;
    expect(get.route).toBe('tasks|get|');
    expect(r.resolve('tasks', 'get')).toBe(get);
    expect(r.resolve('tasks', 'count')!.route).toBe('tasks|count|');
  });

  it('keys custom operations per registered name', () => {
    const r = createPolicyResolver(model({ custom: { complete: { maxRequests: 2, window: 10_000 } } }));
    expect(r.resolve('tasks', 'custom:complete')).toMatchObject({ maxRequests: 2, windowMs: 10_000, route: 'tasks|custom:complete|' });
    expect(r.resolve('tasks', 'custom:archive')).toMatchObject({ ...DEFAULT_POLICY, route: 'tasks|custom:archive|' });
    expect(() => r.resolve('tasks', 'custom:nope')).toThrow(/no operation "custom:nope" on "tasks"/);
  });

  it('has auth operations on auth tables only', () => {
    const r = createPolicyResolver(model());
    expect(r.resolve('users', 'signIn')).toMatchObject({ maxRequests: 5, windowMs: 60_000 });
    expect(r.resolve('users', 'signUp')).toBeNull();
    expect(r.resolve('users', 'refresh')).toMatchObject(DEFAULT_POLICY);
    expect(() => r.resolve('tasks', 'signIn')).toThrow(/no operation/);
  });

  it('covers views, photos and unknown tables', () => {
    const r = createPolicyResolver(model({}, { photos: { policies: { upload: { maxRequests: 7, window: '1h' }, view: null } } }));
    expect(r.resolve('board', 'list')).toBeNull();
    expect(r.resolve('board', 'get')).toMatchObject(DEFAULT_POLICY);
    expect(r.resolve(PHOTOS_TABLE, 'upload')).toMatchObject({ maxRequests: 7, windowMs: 3_600_000 });
    expect(r.resolve(PHOTOS_TABLE, 'view')).toBeNull();
    expect(r.resolve(PHOTOS_TABLE, 'delete')).toMatchObject(DEFAULT_POLICY);
    expect(() => r.resolve('nope', 'get')).toThrow(/no operation "get" on "nope"/);
  });

  it('takes the default from the project, and the explicit argument over it', () => {
    const m = model({}, { server: { defaultPolicy: { maxRequests: 10, window: '1s' } } });
    expect(createPolicyResolver(m).resolve('tasks', 'get')).toMatchObject({ maxRequests: 10, windowMs: 1000 });
    expect(createPolicyResolver(m, { maxRequests: 4, window: 50 }).resolve('tasks', 'get')).toMatchObject({ maxRequests: 4, windowMs: 50 });
    expect(createPolicyResolver(m).defaultPolicy).toEqual({ maxRequests: 10, windowMs: 1000 });
  });

  it('fails at start on invalid policies, naming them', () => {
    expect(() => createPolicyResolver(model({ list: { maxRequests: 3, window: '10 sec' } }))).toThrow(/table "tasks" policy "list": window "10 sec"/);
    expect(() => createPolicyResolver(model({ get: { maxRequests: 0, window: '1s' } }))).toThrow(/policy "get": maxRequests/);
    expect(() => createPolicyResolver(model({ get: { maxRequests: 2.5, window: '1s' } }))).toThrow(/maxRequests/);
    expect(() => createPolicyResolver(model({ custom: { missing: null } }))).toThrow(/policies.custom names "missing"/);
    expect(() => createPolicyResolver(model({ signIn: null }))).toThrow(/table "tasks": unknown policy "signIn"/);
    expect(() => createPolicyResolver(model({}, { photos: { policies: { upload: { maxRequests: 1, window: 'x' } } } }))).toThrow(/photos policy "upload"/);
    expect(() => createPolicyResolver(model({}, { server: { defaultPolicy: { maxRequests: 1, window: '1y' } } }))).toThrow(/server.defaultPolicy/);
  });
});
