/**
 * End-to-end: `tablebase gen client` for the conformance project, type-checked with `tsc
 * --strict` together with a usage module, and that same usage module run against a real server:
 * create, list, count, a typed error, and a live `streamList` that yields the new page after a
 * create (docs/reference/live.md), closed by `return()`.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFolder, typecheck } from '../src/client/typecheck.js';
import { ROOT, startServer, type Row, type TestServer } from './helpers/server.js';

/** Runs with the generated client; every line is type-checked before it runs. */
const USAGE = `import { createClient, TablebaseError, type Page, type TasksRow } from './tablebase-client.js';

export async function crud(baseUrl: string, marker: string) {
  const tasks = createClient({ baseUrl }).table('tasks');
  const created: TasksRow = await tasks.create({ title: marker, tags: ['generated'], priority: 2 });
  const page: Page<TasksRow> = await tasks.list({ where: { title: { eq: marker } }, order_by: [{ column: 'createdAt', direction: 'desc' }] });
  const count: number = await tasks.count({ and: [{ title: { startsWith: marker } }, { tags: { has: 'generated' } }] });
  const fetched = await tasks.get({ id: { eq: created.id } });
  let error: { status: number; code: string; details: unknown } | undefined;
  try {
    await tasks.create({ title: marker, nope: 1 } as never);
  } catch (e) {
    if (e instanceof TablebaseError) error = { status: e.status, code: e.code, details: e.details };
  }
  return { created, page, count, fetched, error };
}

export async function live(baseUrl: string, marker: string) {
  const tasks = createClient({ baseUrl }).table('tasks');
  const stream = tasks.streamList({ where: { title: { startsWith: marker } }, order_by: [{ column: 'id' }] });
  const first = await stream.next();
  const made = await tasks.create({ title: marker + '-2' });
  let second = await stream.next();
  // Payloads follow commits; skip any that predate the create.
  while (!second.done && !second.value.items.some((t) => t.id === made.id)) second = await stream.next();
  await stream.return();
  const after = await stream.next();
  return { first: first.value, second: second.value, made, afterDone: after.done };
}
`;

const cli = (args: string[]) =>
  new Promise<{ code: number; output: string }>((res) =>
    execFile(process.execPath, [join(ROOT, 'bin/tablebase.mjs'), ...args], { cwd: ROOT, timeout: 60_000 }, (err, stdout, stderr) => res({ code: err ? 1 : 0, output: stdout + stderr })),
  );

let dir: string;
beforeAll(async () => {
  dir = clientFolder({ 'usage.ts': USAGE });
  const r = await cli(['gen', 'client', '--project', join(ROOT, 'examples/conformance'), '--out', join(dir, 'tablebase-client.ts')]);
  expect(r.code, r.output).toBe(0);
}, 180_000);
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('tablebase gen client', () => {
  it('writes one self-contained file', () => {
    const code = readFileSync(join(dir, 'tablebase-client.ts'), 'utf8');
    expect(code).not.toMatch(/^\s*import\s/m);
    for (const t of ['TasksRow', 'TasksCreate', 'TasksWhere', 'TasksUpdate', 'TaskBoardRow', 'UsersSignUp'])
      expect(code).toContain(`export interface ${t}`.replace('interface TasksUpdate', 'type TasksUpdate'));
  });

  it('defaults to <project>/tablebase-client.ts and refuses an unknown generator', async () => {
    const bad = await cli(['gen', 'server']);
    expect(bad.code).toBe(1);
    expect(bad.output).toContain('gen client');
    expect(existsSync(join(ROOT, 'examples/conformance/tablebase-client.ts'))).toBe(false);
  });

  it('type-checks with tsc --strict together with the usage module', async () => {
    const r = await typecheck(dir, ['tablebase-client.ts', 'usage.ts']);
    expect(r.output).toBe('');
    expect(r.code).toBe(0);
  }, 120_000);
});

describe('the generated client against a running server', () => {
  let s: TestServer;
  /** What the generated usage.ts answers (read here without the generated types). */
  type Page = { items: Row[]; total: number };
  let usage: {
    crud: (base: string, marker: string) => Promise<{ created: Row; page: Page; count: number; fetched: Row; error: { details: unknown } }>;
    live: (base: string, marker: string) => Promise<{ first: Page; second: Page; made: Row; afterDone: boolean }>;
  };
  beforeAll(async () => {
    s = await startServer();
    usage = await import(pathToFileURL(join(dir, 'usage.ts')).href);
  });
  afterAll(async () => {
    await s?.dispose();
  });

  it('creates, lists, counts and gets; errors are TablebaseError with details', async () => {
    const marker = `client-${Date.now()}`;
    const r = await usage.crud(s.base, marker);
    expect(r.created).toMatchObject({ title: marker, tags: ['generated'], priority: 2, isComplete: false });
    expect(r.created.id).toMatch(/^tk_/);
    expect(r.page.total).toBe(1);
    expect(r.page.items[0]).toEqual(r.created);
    expect(r.count).toBe(1);
    expect(r.fetched).toEqual(r.created);
    expect(r.error).toMatchObject({ status: 400, code: 'BAD_REQUEST' });
    expect(Array.isArray(r.error.details)).toBe(true);
  });

  it('streamList yields the first page, then the page with a newly created task, and return() ends it', async () => {
    const marker = `live-${Date.now()}`;
    const r = await usage.live(s.base, marker);
    expect(r.first).toEqual({ items: [], total: 0 });
    expect(r.second.total).toBe(1);
    expect(r.second.items.map((t) => t.id)).toEqual([r.made.id]);
    expect(r.afterDone).toBe(true);
  });
});
