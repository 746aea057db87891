/**
 * How much prepared-statement cache a connection may hold (docs/reference/data.md: bounded in bytes, not only
 * in count). better-sqlite3 does not report a statement's memory, so it is estimated from the
 * SQL length: a statement's bytecode and parameter slots grow with its text (measured ≈ 10 KB of
 * RSS for a 4 KB statement with 1,000 parameters). Statements longer than `MAX_CACHED_SQL` are
 * prepared, run and dropped: a filter that large is almost never sent twice, and caching 1,000 of
 * them took the server from 177 MB to 5.1 GB (issue #11).
 */
export const STATEMENT_CACHE = 1000;
export const STATEMENT_CACHE_BYTES = 16 * 1024 * 1024;
export const MAX_CACHED_SQL = 16 * 1024;
export const statementCost = { fixed: 2048, perChar: 4 } as const;

export function costOf(sql: string): number {
  return statementCost.fixed + sql.length * statementCost.perChar;
}
