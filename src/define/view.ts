/**
 * `view(...)`: a read-only collection defined by a projection of one table and optional joins.
 * Output columns are typed from the source columns they select. The server wraps the view's query
 * as a subquery, so sorting and filtering by an output name never meets an ambiguous column
 * (docs/reference/rules-and-hooks.md) and the count query mirrors the joins (rule 4).
 */
import type { AnyTable, ColumnRef } from './table.js';
import type { Jwt, OrderBy, Rule, TablePolicies, Verdict } from './types.js';

export interface ViewJoin {
  table: AnyTable;
  type?: 'left' | 'inner';
  /** [left column, right column]: equality join. */
  on: [ColumnRef<unknown>, ColumnRef<unknown>];
}

export type SelectMap = Record<string, ColumnRef<unknown>>;

export type ViewRowOf<S extends SelectMap> = { [K in keyof S]: S[K] extends ColumnRef<infer T> ? T : never };

export interface ViewRules {
  canList?: Rule;
  canView?: Rule;
  canCount?: Rule;
  requiresPerRowCheck?: boolean;
}

export interface ViewOptions<S extends SelectMap> {
  from: AnyTable;
  joins?: ViewJoin[];
  select: S;
  /** Absent: the first selected column, ascending. */
  defaultOrder?: OrderBy<ViewRowOf<S>>[];
  rules?: ViewRules;
  /** Method form: bivariant, so a `View<S>` fits where any view is accepted (see RowRules). */
  rowRules?: { canView?(jwt: Jwt | null, row: ViewRowOf<S>): Verdict };
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

/** Any declared view, whatever it selects (structural for the same reason as `AnyTable`). */
export interface AnyView {
  readonly kind: 'view';
  readonly name: string;
  readonly options: Omit<ViewOptions<SelectMap>, 'defaultOrder' | 'rowRules'> & {
    defaultOrder?: { column: string; direction?: 'asc' | 'desc' }[];
    rowRules?: { canView?(jwt: Jwt | null, row: Record<string, unknown>): Verdict };
  };
}

export function view<S extends SelectMap>(name: string, options: ViewOptions<S>): View<S> {
  return new View(name, options);
}
