/**
 * How values come back from PostgreSQL: in the same JSON form SQLite's decoder produces, so rows
 * need no per-column decoding (postgres/dialect.ts).
 */
import pg from 'pg';

const INT8 = 20;
const TIMESTAMP = 1114;
const TIMESTAMPTZ = 1184;

const PG_TIMESTAMP = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?(?:\+00)?$/;

/** `2026-01-02 03:04:05.12+00` (session TimeZone=UTC) → `2026-01-02T03:04:05.120Z`. */
export function parseTimestamp(s: string): string {
  const m = PG_TIMESTAMP.exec(s);
  if (m) return `${m[1]}T${m[2]}.${(m[3] ?? '').padEnd(3, '0').slice(0, 3)}Z`;
  return new Date(s).toISOString();
}

/** int8 holds safe integers only (values.ts checks them) and COUNT(*): a number, not a string. */
const parseInt8 = (s: string): number => Number(s);

export const typeParsers: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (format !== 'binary') {
      if (oid === INT8) return parseInt8;
      if (oid === TIMESTAMPTZ || oid === TIMESTAMP) return parseTimestamp;
    }
    return pg.types.getTypeParser(oid, format);
  }) as pg.CustomTypesConfig['getTypeParser'],
};

/** `host:port/database` of a connection URL, without credentials (for messages and logs). */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return 'an unparseable URL';
  }
}
