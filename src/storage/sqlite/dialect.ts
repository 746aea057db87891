/** SQLite specifics: 0/1 booleans, JSON text for lists and json, GLOB for case-sensitive text matching. */
import type { ColumnModel } from '../../core/model.js';
import type { ColumnSpec } from '../../define/columns.js';
import type { Bind, Dialect } from '../dialect.js';
import type { RawRow } from '../plan.js';
import type { Row } from '../plan.js';

const BOOLEAN_KINDS = new Set(['boolean', 'isVerified']);
const JSON_KINDS = new Set(['list', 'json']);

/** GLOB is case-sensitive; its own wildcards (* ? [) are escaped as one-character classes. */
function globEscape(s: string): string {
  return s.replace(/[*?[]/g, (c) => `[${c}]`);
}

export const sqliteDialect: Dialect = Object.freeze({
  name: 'sqlite' as const,
  quote: (identifier: string) => `"${identifier.replace(/"/g, '""')}"`,
  param: () => '?',
  encode(column: ColumnModel, value: unknown): unknown {
    if (value === null || value === undefined) return null;
    const kind = column.spec.kind;
    if (BOOLEAN_KINDS.has(kind)) return value ? 1 : 0;
    if (JSON_KINDS.has(kind)) return JSON.stringify(value);
    return value;
  },
  /** json_each yields JSON true/false as 1/0. */
  encodeItem(column: ColumnModel, item: unknown): unknown {
    if (column.spec.of === 'boolean') return item ? 1 : 0;
    return item;
  },
  decoder(columns: readonly ColumnModel[]): (raw: RawRow) => Row {
    const bools = columns.filter((c) => BOOLEAN_KINDS.has(c.spec.kind)).map((c) => c.name);
    const jsons = columns.filter((c) => JSON_KINDS.has(c.spec.kind)).map((c) => c.name);
    if (bools.length === 0 && jsons.length === 0) return (raw) => raw as Row;
    return (raw) => {
      for (const k of bools) {
        const v = raw[k];
        if (v !== null) raw[k] = v === 1;
      }
      for (const k of jsons) {
        const v = raw[k];
        if (typeof v === 'string') raw[k] = JSON.parse(v);
      }
      return raw as Row;
    };
  },
  textMatch(op: 'contains' | 'startsWith' | 'endsWith', column: string, value: string, bind: Bind): string {
    const e = globEscape(value);
    const pattern = op === 'contains' ? `*${e}*` : op === 'startsWith' ? `${e}*` : `*${e}`;
    return `${column} GLOB ${bind(pattern)}`;
  },
  listHas(column: string, item: unknown, bind: Bind): string {
    return `EXISTS (SELECT 1 FROM json_each(${column}) WHERE value = ${bind(item)})`;
  },
  lockForWrite: '',
  orderTerm: (column: string, direction: 'asc' | 'desc') => `${column} ${direction === 'desc' ? 'DESC' : 'ASC'}`,
  columnType(spec: ColumnSpec): string {
    switch (spec.kind) {
      case 'integer':
      case 'boolean':
      case 'isVerified':
        return 'INTEGER';
      case 'real':
        return 'REAL';
      default:
        return 'TEXT';
    }
  },
});
