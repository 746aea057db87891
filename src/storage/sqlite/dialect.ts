/** SQLite specifics: 0/1 booleans, JSON text for lists and json, instr/substr for case-sensitive text matching. */
import type { ColumnModel } from '../../core/model.js';
import type { ColumnSpec } from '../../define/columns.js';
import type { Bind, Dialect } from '../dialect.js';
import { sqliteDdl } from './ddl.js';
import type { RawRow } from '../plan.js';
import type { Row } from '../plan.js';

const BOOLEAN_KINDS = new Set(['boolean', 'isVerified']);
const JSON_KINDS = new Set(['list', 'json']);

/** SQLite's substr and instr count characters (code points), not UTF-16 units. */
function codePoints(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) n--;
  }
  return n;
}
/**
 * True when compiled SQL holds a text match (textMatch below writes `instr(` or `substr(`); the
 * driver runs those reads off the event loop. A column whose name holds these letters only sends
 * its reads there too: slower, never wrong.
 */
export function usesTextMatch(sql: string): boolean {
  // One scan for what both share; it runs on every read and almost never finds anything.
  const at = sql.indexOf('str(');
  return at >= 0 && (sql.includes('instr(', at - 2) || sql.includes('substr(', at - 3));
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
  /**
   * Not GLOB/LIKE: `GLOB '*x*'` backtracks, and a long pattern against a long text held the event
   * loop for seconds (issue #11: 36 s for one count). instr is one memcmp per position and substr
   * compares a prefix or suffix only, so the cost is at most (text length × operand length, ≤ 256
   * by docs/reference/data.md) and usually linear. Both are case-sensitive and treat every character literally.
   */
  textMatch(op: 'contains' | 'startsWith' | 'endsWith', column: string, value: string, bind: Bind): string {
    if (value === '') return `${column} IS NOT NULL`; // every text contains, starts and ends with ''
    if (op === 'contains') return `instr(${column}, ${bind(value)}) > 0`;
    const n = codePoints(value);
    if (op === 'startsWith') return `substr(${column}, 1, ${bind(n)}) = ${bind(value)}`;
    return `substr(${column}, ${bind(-n)}) = ${bind(value)}`;
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
  blobType: 'BLOB',
  // SQLite has one writer: a claim inside the write transaction already excludes every other.
  supportsSkipLocked: false,
  supportsReturning: true,
  upsert: 'on-conflict' as const,
  sharedByNodes: false,
  ddl: sqliteDdl,
});
