/**
 * PostgreSQL specifics (issue #15), chosen so every answer equals SQLite's:
 * - text is `TEXT COLLATE "C"`: byte order, the same order SQLite's BINARY collation gives, on any
 *   server locale (an `en_US` default would sort `B` after `a`).
 * - timestamps are `TIMESTAMPTZ(3)`: millisecond precision, read back as ISO strings in UTC by the
 *   driver's type parser (postgres/driver.ts), so plans keep binding ISO strings.
 * - booleans are `BOOLEAN`; integers `BIGINT` (every safe integer fits; the driver reads int8 as a
 *   number); reals `DOUBLE PRECISION`.
 * - lists and json are `JSONB`, not arrays: one encoding for both kinds (as SQLite's JSON text), so
 *   the `list → json` widening changes nothing stored; item order is kept; a list of booleans or
 *   reals needs no per-type array machinery; and `has` is a containment test (`@>`) that a GIN
 *   index can serve.
 * - text matching is literal and case-sensitive without patterns: `strpos`, `starts_with` and
 *   `right`, so no character of the value is ever a wildcard (docs/reference/data.md).
 */
import type { ColumnModel } from '../../core/model.js';
import type { ColumnSpec } from '../../define/columns.js';
import type { Bind, Dialect } from '../dialect.js';
import { postgresDdl } from './ddl.js';
import type { RawRow } from '../plan.js';
import type { Row } from '../plan.js';

const JSON_KINDS = new Set(['list', 'json']);

export const postgresDialect: Dialect = Object.freeze({
  name: 'postgres' as const,
  quote: (identifier: string) => `"${identifier.replace(/"/g, '""')}"`,
  param: (n: number) => `$${n}`,
  encode(column: ColumnModel, value: unknown): unknown {
    if (value === null || value === undefined) return null;
    // Bound as JSON text and cast by the column's type; node-postgres would send a JS array as a
    // PostgreSQL array literal otherwise.
    if (JSON_KINDS.has(column.spec.kind)) return JSON.stringify(value);
    return value;
  },
  /** Compared by containment: the item as a one-element JSON array. */
  encodeItem(_column: ColumnModel, item: unknown): unknown {
    return JSON.stringify([item]);
  },
  /** The driver's type parsers already yield JSON values (ISO timestamps, numbers, parsed jsonb). */
  decoder(): (raw: RawRow) => Row {
    return (raw) => raw as Row;
  },
  textMatch(op: 'contains' | 'startsWith' | 'endsWith', column: string, value: string, bind: Bind): string {
    const p = `${bind(value)}::text`;
    if (op === 'contains') return `strpos(${column}, ${p}) > 0`;
    if (op === 'startsWith') return `starts_with(${column}, ${p})`;
    return `right(${column}, char_length(${p})) = ${p}`;
  },
  listHas(column: string, item: unknown, bind: Bind): string {
    return `${column} @> ${bind(item)}::jsonb`;
  },
  lockForWrite: ' FOR UPDATE',
  /**
   * PostgreSQL ranks nulls last ascending by default; SQLite (and the live engine) first. Only
   * nullable columns say so: a NULLS FIRST on `id` would stop the primary key's index from
   * serving the order.
   */
  orderTerm: (column: string, direction: 'asc' | 'desc', nullable: boolean) =>
    `${column} ${direction === 'desc' ? 'DESC' : 'ASC'}${nullable ? (direction === 'desc' ? ' NULLS LAST' : ' NULLS FIRST') : ''}`,
  columnType(spec: ColumnSpec): string {
    switch (spec.kind) {
      case 'integer':
        return 'BIGINT';
      case 'boolean':
      case 'isVerified':
        return 'BOOLEAN';
      case 'real':
        return 'DOUBLE PRECISION';
      case 'timestamp':
      case 'createdAt':
      case 'updatedAt':
      case 'updatedWhen':
        return 'TIMESTAMPTZ(3)';
      case 'list':
      case 'json':
        return 'JSONB';
      default:
        return 'TEXT COLLATE "C"';
    }
  },
  blobType: 'BYTEA',
  supportsSkipLocked: true,
  supportsReturning: true,
  upsert: 'on-conflict' as const,
  sharedByNodes: true,
  ddl: postgresDdl,
});
