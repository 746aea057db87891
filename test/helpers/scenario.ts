/**
 * API scenarios as data, in the habit of PocketBase's `tests/api.go`: one request, who sends it,
 * and everything its answer must show. A table of scenarios reads as a specification of a route
 * family; adding a case is adding a row.
 *
 *   scenarios('GET /db', ctx, [
 *     { name: 'a stranger may not read a note', method: 'GET', path: '/db', as: 'bob',
 *       body: (c) => ({ table: 'notes', where: { id: { eq: c.vars.noteId } } }), status: 403, code: 'FORBIDDEN' },
 *   ]);
 *
 * Each scenario becomes one vitest test, run in order (later rows may rely on earlier ones).
 * What does not fit one request and one answer stays an ordinary test; `runScenario` is there
 * for tests that want one scenario step among others.
 */
import { describe, expect, it } from 'vitest';
import { until } from './poll.js';
import type { Reply, TestServer } from './server.js';

export interface ScenarioContext {
  server: TestServer;
  /** Request headers by caller name: `as: 'alice'` sends `who.alice` (usually `bearer(token)`). */
  who: Record<string, Record<string, string>>;
  /** Whatever `before` hooks or setup stored for later rows (ids of rows made for a case). */
  vars: Record<string, string>;
}

/** A value, or one computed when the scenario runs (ids known only then). */
export type Lazy<T> = T | ((ctx: ScenarioContext) => T);

/** An effect a hook must have had once the request answered (docs/reference/rules-and-hooks.md: after-hooks run after commit). */
export type HookEffect =
  /** The conformance `audit` rows for `ref` (default: the answered row's id), actions in order, exactly. */
  | { audit: string[]; ref?: Lazy<string> }
  /** A server log line matching this appeared after the request was sent. */
  | { logged: string | RegExp };

export interface Scenario {
  name: string;
  method: string;
  /** The request path; a function for paths that carry an id known only when the row runs (`/img/<id>`). */
  path: string | ((ctx: ScenarioContext) => string);
  /**
   * JSON body; a GET sends it in `?body=` (docs/reference/conventions.md) unless `bodyInQuery: false`. A string is sent as
   * is, and so are bytes (an upload: give its `content-type` in `headers`).
   */
  body?: Lazy<string | number | boolean | object | null>;
  bodyInQuery?: boolean;
  /** Who calls: a key of `ctx.who`; absent means no token. */
  as?: string;
  headers?: Record<string, string>;
  /** The expected HTTP status. */
  status: number;
  /** The expected `error.code` (docs/reference/conventions.md); implies a JSON error envelope. */
  code?: string;
  /** The answer's `data` must equal this. */
  data?: Lazy<unknown>;
  /** The answer's `data` must match this (`toMatchObject`). */
  like?: Lazy<object>;
  /** Fragments the raw body must contain. */
  contains?: (string | RegExp)[];
  /** Fragments the raw body must not contain (SQL text, stack traces, passwords…). */
  lacks?: (string | RegExp)[];
  /** Response headers (lower-case names) that must equal a string, match a RegExp, or be absent (`null`). */
  answerHeaders?: Record<string, string | RegExp | null>;
  /** Hook effects that must follow (polled: they land after the answer). */
  fires?: HookEffect[];
  /** Runs first: make the rows this case needs and put their ids in `ctx.vars`. */
  before?: (ctx: ScenarioContext) => Promise<void>;
  /** Runs last with the answer, for checks that are not data (e.g. "nothing was written"). */
  after?: (r: Reply, ctx: ScenarioContext) => Promise<void>;
}

const resolve = <T>(v: Lazy<T>, ctx: ScenarioContext): T => (typeof v === 'function' ? (v as (c: ScenarioContext) => T)(ctx) : v);

/** The path as a test title shows it: a computed path is shown by the name of its function, if any. */
const shownPath = (sc: Scenario): string => (typeof sc.path === 'string' ? sc.path : sc.path.name || '<computed path>');

function send(sc: Scenario, ctx: ScenarioContext): Promise<Reply> {
  const body = resolve(sc.body, ctx);
  const path = resolve(sc.path, ctx);
  const headers = { ...(sc.as === undefined ? {} : whoseHeaders(ctx, sc.as)), ...sc.headers };
  if (body instanceof Uint8Array) return sendBytes(ctx, sc.method, path, body, headers);
  if (sc.method === 'GET' && body !== undefined && sc.bodyInQuery !== false) return ctx.server.get(path, body, headers);
  return ctx.server.call(sc.method, path, body, headers);
}

/** `server.call` sends JSON; an upload's bytes go through fetch as they are. */
async function sendBytes(ctx: ScenarioContext, method: string, path: string, bytes: Uint8Array, headers: Record<string, string>): Promise<Reply> {
  const r = await fetch(ctx.server.base + path, { method, body: new Uint8Array(bytes), headers });
  const text = await r.text();
  let json: Reply['json'] = undefined as unknown as Reply['json'];
  try {
    json = JSON.parse(text) as Reply['json'];
  } catch {
    // not JSON: the row's `code` check reports it
  }
  return { status: r.status, json, text, headers: r.headers };
}

function whoseHeaders(ctx: ScenarioContext, who: string): Record<string, string> {
  const h = ctx.who[who];
  if (!h) throw new Error(`scenario caller "${who}" is not in ctx.who (${Object.keys(ctx.who).join(', ')})`);
  return h;
}

function expectFragment(text: string, f: string | RegExp, present: boolean, what: string): void {
  const found = typeof f === 'string' ? text.includes(f) : f.test(text);
  expect(found, `${what}: body ${present ? 'lacks' : 'has'} ${String(f)}: ${text.slice(0, 500)}`).toBe(present);
}

async function checkEffect(effect: HookEffect, r: Reply, ctx: ScenarioContext, logBefore: number, what: string): Promise<void> {
  if ('logged' in effect) {
    const seen = () => ctx.server.log().slice(logBefore);
    await until(
      async () => seen(),
      (log) => (typeof effect.logged === 'string' ? log.includes(effect.logged) : effect.logged.test(log)),
      `${what}: log ${String(effect.logged)}`,
    );
    return;
  }
  const ref = effect.ref === undefined ? (r.json?.data?.id as string) : resolve(effect.ref, ctx);
  expect(ref, `${what}: no row id to find audit rows for`).toBeTruthy();
  const read = async () =>
    (await ctx.server.get<{ data?: { items?: { action: string }[] } } | undefined>('/db/list', { table: 'audit', where: { ref: { eq: ref } }, limit: 100 })).json?.data?.items ?? [];
  const rows = await until(read, (a: { action: string }[]) => a.length >= effect.audit.length, `${what}: audit rows ${effect.audit.join(', ')}`);
  expect(
    rows.map((a: { action: string }) => a.action),
    what,
  ).toEqual(effect.audit);
}

/** Sends one scenario and checks everything it states; answers the reply for further checks. */
export async function runScenario(sc: Scenario, ctx: ScenarioContext): Promise<Reply> {
  const what = `${sc.method} ${shownPath(sc)}: ${sc.name}`;
  await sc.before?.(ctx);
  const logBefore = ctx.server.log().length;
  const r = await send(sc, ctx);
  expect(r.status, `${what}: ${r.text.slice(0, 500)}`).toBe(sc.status);
  if (sc.code !== undefined) {
    expect(r.headers.get('content-type'), what).toMatch(/^application\/json/);
    expect(r.json?.error?.code, what).toBe(sc.code);
  }
  if (sc.data !== undefined) expect(r.json?.data, what).toEqual(resolve(sc.data, ctx));
  if (sc.like !== undefined) expect(r.json?.data, what).toMatchObject(resolve(sc.like, ctx));
  for (const f of sc.contains ?? []) expectFragment(r.text, f, true, what);
  for (const f of sc.lacks ?? []) expectFragment(r.text, f, false, what);
  for (const [name, want] of Object.entries(sc.answerHeaders ?? {})) {
    const got = r.headers.get(name);
    if (want === null) expect(got, `${what}: header ${name}`).toBeNull();
    else if (typeof want === 'string') expect(got, `${what}: header ${name}`).toBe(want);
    else expect(got, `${what}: header ${name}`).toMatch(want);
  }
  for (const effect of sc.fires ?? []) await checkEffect(effect, r, ctx, logBefore, what);
  await sc.after?.(r, ctx);
  return r;
}

/** One `describe(title)` with one test a scenario, run in the order given. */
export function scenarios(title: string, ctx: ScenarioContext, list: Scenario[]): void {
  describe(title, () => {
    for (const sc of list) it(`${sc.method} ${shownPath(sc)}: ${sc.name}`, () => runScenario(sc, ctx).then(() => undefined));
  });
}
