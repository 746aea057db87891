/** The project's schema as /dashboard/schema describes it, loaded once per sign-in. */
import type { CollectionInfo, ColumnInfo } from '../schema';
import { api } from './api';
import { onSessionChange } from './session';

/** The server's own description types (type-only: nothing of the server is bundled). */
export type Column = ColumnInfo;
export type Collection = CollectionInfo;

let cached: Promise<Collection[]> | null = null;
onSessionChange(() => (cached = null));

export function loadSchema(): Promise<Collection[]> {
  cached ??= api<Collection[]>('GET', '/dashboard/schema').catch((err: unknown) => {
    cached = null;
    throw err;
  });
  return cached;
}

const TIME_KINDS = new Set(['timestamp', 'createdAt', 'updatedAt', 'updatedWhen']);
export const isTime = (c: Column): boolean => TIME_KINDS.has(c.kind);
export const isNumber = (c: Column): boolean => c.kind === 'integer' || c.kind === 'real';
export const isBool = (c: Column): boolean => c.kind === 'boolean' || c.kind === 'isVerified';

/** Where-grammar operators by column kind (docs/reference/data.md). */
export function operatorsFor(c: Column): string[] {
  if (c.kind === 'json') return ['isNull'];
  if (c.kind === 'list') return ['has', 'isNull'];
  if (isBool(c)) return ['eq', 'ne', 'isNull'];
  const base = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'isNull'];
  return c.kind === 'text' || c.kind === 'email' || c.kind === 'id' ? [...base, 'contains', 'startsWith', 'endsWith'] : base;
}
