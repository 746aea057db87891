/**
 * Rows through the /db API (docs/reference/data.md) for end-to-end tests that need data to act on.
 */
import { expect } from 'vitest';
import type { Row, TestServer } from './server.js';

/** One write that must succeed (2xx); answers its `data` (undefined for a 204). */
export async function write<T = Row>(s: TestServer, method: string, path: string, body: unknown, headers?: Record<string, string>): Promise<T> {
  const r = await s.call<{ data: T } | undefined>(method, path, body, headers);
  expect(r.status, `${method} ${path}: ${r.text}`).toBeLessThan(300);
  return r.json?.data as T;
}

/** POST /db: the created row. */
export const createRow = <T = Row>(s: TestServer, table: string, object: Record<string, unknown>, headers?: Record<string, string>) => write<T>(s, 'POST', '/db', { table, object }, headers);

/** POST /db/many: the created rows, in input order. */
export const createRows = (s: TestServer, table: string, objects: Record<string, unknown>[], headers?: Record<string, string>): Promise<Row[]> =>
  write<Row[]>(s, 'POST', '/db/many', { table, objects }, headers);

/** GET /db/list of up to 1000 rows matching `where`: the items. */
export async function listRows<T = Row>(s: TestServer, table: string, where: object = {}, headers?: Record<string, string>): Promise<T[]> {
  const r = await s.get<{ data: { items: T[] } }>('/db/list', { table, where, limit: 1000 }, headers);
  expect(r.status, r.text).toBe(200);
  return r.json.data.items;
}

/** GET /db/count. */
export async function countRows(s: TestServer, table: string, where: object = {}, headers?: Record<string, string>): Promise<number> {
  const r = await s.get<{ data: number }>('/db/count', { table, where }, headers);
  expect(r.status, r.text).toBe(200);
  return r.json.data;
}

let seq = 0;
/** A marker no other test uses (titles, bodies), so each test sees only its own rows. */
export const tag = (prefix = 't') => `${prefix}${Date.now().toString(36)}${seq++}`;
