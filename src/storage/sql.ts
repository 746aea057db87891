/**
 * The plain value types shared by the driver and the dialect. They live apart from both so that
 * `dialect.ts` and `driver.ts` do not import each other (issue #10 item 5: no import cycles).
 */
export type SqlParams = readonly unknown[];
export type RawRow = Record<string, unknown>;

export interface SqlRunner {
  all(sql: string, params?: SqlParams): Promise<RawRow[]>;
  get(sql: string, params?: SqlParams): Promise<RawRow | undefined>;
  run(sql: string, params?: SqlParams): Promise<{ changes: number }>;
}
