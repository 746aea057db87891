/**
 * `view(...)`: a read-only collection defined by a projection of one table and optional joins.
 * Output columns are typed from the source columns they select. The server wraps the view's query
 * as a subquery, so sorting and filtering by an output name never meets an ambiguous column
 * (seed, View row rule 3) and the count query mirrors the joins (rule 4).
 */
import type { ColumnRef, Table } from './table.js';
import type { Jwt, OrderBy, Rule, TablePolicies, Verdict } from './types.js';

export interface ViewJoin {
  table: Table<any>;
  type?: 'left' | 'inner';
  /** [left column, right column]: equality join. */
  on: [ColumnRef<unknown>, ColumnRef<unknown>];
}

export type SelectMap = Record<string, ColumnRef<any>>;

export type ViewRowOf<S extends SelectMap> = { [K in keyof S]: S[K] extends ColumnRef<infer T> ? T : never };

export interface ViewRules {
  canList?: Rule;
  canView?: Rule;
  canCount?: Rule;
  requiresPerRowCheck?: boolean;
}

export interface ViewOptions<S extends SelectMap> {
  from: Table<any>;
  joins?: ViewJoin[];
  select: S;
  /** Absent: the first selected column, ascending. */
  defaultOrder?: OrderBy<ViewRowOf<S>>[];
  rules?: ViewRules;
  rowRules?: { canView?: (jwt: Jwt | null, row: ViewRowOf<S>) => Verdict };
  policies?: Pick<TablePolicies, 'get' | 'list' | 'count'>;
}

export class View<S extends SelectMap = SelectMap> {
  readonly kind = 'view' as const;
  declare readonly $row: ViewRowOf<S>;
  constructor(
    readonly name: string,
    readonly options: ViewOptions<S>,
  ) {
    Object.freeze(this);
  }
}

export function view<S extends SelectMap>(name: string, options: ViewOptions<S>): View<S> {
  return new View(name, options);
}
