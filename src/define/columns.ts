/**
 * Column builders: the user-facing vocabulary of docs/reference/columns.md.
 *
 * A column is an immutable value. Builder methods return a new column, and the phantom type
 * parameters carry the JSON value type (`T`) and how the column behaves on create (`M`) so that a
 * table declared once types its rows, create objects and where filters everywhere.
 */

export type ScalarKind = 'text' | 'integer' | 'real' | 'boolean';

export type ColumnKind = 'text' | 'email' | 'integer' | 'real' | 'boolean' | 'timestamp' | 'list' | 'json' | 'createdAt' | 'updatedAt' | 'updatedWhen' | 'password' | 'isVerified' | 'photo' | 'id';

/** How a column behaves in a create object: required, optional (nullable or defaulted), or set by the server. */
export type CreateMode = 'required' | 'optional' | 'managed';

export interface ColumnSpec {
  readonly kind: ColumnKind;
  readonly nullable: boolean;
  /** `undefined` means no default. A function default is evaluated per insert. */
  readonly default: unknown;
  readonly hasDefault: boolean;
  readonly unique: boolean;
  readonly index: boolean;
  /** Name of the referenced table (its `id`). */
  readonly references: string | undefined;
  /** Item kind of a `list` column. */
  readonly of: ScalarKind | undefined;
  /** The watched column of an `updatedWhen` column (camelCase). */
  readonly watches: string | undefined;
  /**
   * `'hook'`: a `beforeCreate` hook sets the column, so a create may leave it out — optional in
   * the generated client's and OpenAPI's create types and in the dashboard's new-row form
   * (docs/reference/columns.md). Absent on every other column.
   */
  readonly filledBy?: 'hook';
}

export class Column<T, M extends CreateMode = 'required'> {
  declare readonly __value: T;
  declare readonly __mode: M;
  readonly spec: ColumnSpec;

  constructor(spec: ColumnSpec) {
    this.spec = Object.freeze({ ...spec });
    Object.freeze(this);
  }

  #with(patch: Partial<ColumnSpec>): ColumnSpec {
    return { ...this.spec, ...patch };
  }

  /** Allows `null`; a nullable column is optional on create. */
  nullable(): Column<T | null, M extends 'managed' ? 'managed' : 'optional'> {
    return new Column(this.#with({ nullable: true }));
  }

  /** A value used when a create omits the column (a function is called per insert). */
  default(value: T | (() => T)): Column<T, M extends 'managed' ? 'managed' : 'optional'> {
    return new Column(this.#with({ default: value, hasDefault: true }));
  }

  /**
   * Declares that the table's `beforeCreate` hook fills this column (an owner set from the
   * caller's token, a slug made from a title). Clients may then leave it out of a create: it is
   * optional in `TableCreate` types, the OpenAPI create schema and the dashboard form. A hook
   * body cannot be read to find out, hence the declaration; the hook must still set it (or the
   * create fails like any missing required value).
   */
  filledBy(by: 'hook'): Column<T, M extends 'managed' ? 'managed' : 'optional'> {
    return new Column(this.#with({ filledBy: by }));
  }

  unique(): Column<T, M> {
    return new Column(this.#with({ unique: true }));
  }

  index(): Column<T, M> {
    return new Column(this.#with({ index: true }));
  }

  /** This column holds the `id` of a row of `table`. */
  references(table: string): Column<T, M> {
    return new Column(this.#with({ references: table }));
  }
}

function make<T, M extends CreateMode = 'required'>(kind: ColumnKind, extra: Partial<ColumnSpec> = {}): Column<T, M> {
  return new Column<T, M>({
    kind,
    nullable: false,
    default: undefined,
    hasDefault: false,
    unique: false,
    index: false,
    references: undefined,
    of: undefined,
    watches: undefined,
    ...extra,
  });
}

type ScalarOf<K extends ScalarKind> = K extends 'text' ? string : K extends 'boolean' ? boolean : number;

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** The column kinds of docs/reference/columns.md. */
export const column = {
  text: () => make<string>('text'),
  /** Trimmed and lowercased on write; must look like an email. */
  email: () => make<string>('email'),
  integer: () => make<number>('integer'),
  real: () => make<number>('real'),
  boolean: () => make<boolean>('boolean'),
  /** ISO-8601 UTC with milliseconds in JSON; accepts an ISO string or epoch ms on input. */
  timestamp: () => make<string>('timestamp'),
  list: <K extends ScalarKind>(of: K) => make<ScalarOf<K>[]>('list', { of }),
  json: <T = Json>() => make<T>('json'),
  /** Holds the id of a row of `_photos`; a write naming a missing photo is a 400. */
  photo: () => make<string>('photo', { references: '_photos' }),
  createdAt: () => make<string, 'managed'>('createdAt'),
  updatedAt: () => make<string, 'managed'>('updatedAt'),
  /** Set to now whenever an update changes `watched`; null until then. */
  updatedWhen: (watched: string) => make<string | null, 'managed'>('updatedWhen', { watches: watched, nullable: true }),
} as const;

/** Auth-table columns, added by `authTable` itself. */
export const authColumns = {
  email: () => make<string>('email', { unique: true }),
  password: () => make<never>('password'),
  isVerified: () => make<boolean, 'managed'>('isVerified', { hasDefault: true, default: false }),
};

/** Any column: `Column<T>` fits because `T` appears only in results and in (bivariant) method parameters. */
export type AnyColumn = Column<unknown, CreateMode>;
export type ColumnMap = Record<string, AnyColumn>;

/** Value type of a column. */
export type ValueOf<C> = C extends Column<infer T, CreateMode> ? T : never;
type ModeOf<C> = C extends Column<unknown, infer M> ? M : never;

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** The row a client sees: every column but `password`, plus `id`. */
export type RowOf<C extends ColumnMap> = Simplify<{ id: string } & { [K in keyof C as C[K] extends Column<never, CreateMode> ? never : K]: ValueOf<C[K]> }>;

/** The `object` of a create: required columns, optional ones; server-managed columns are absent. */
export type CreateOf<C extends ColumnMap> = Simplify<
  { [K in keyof C as ModeOf<C[K]> extends 'required' ? (C[K] extends Column<never, CreateMode> ? never : K) : never]: ValueOf<C[K]> } & {
    [K in keyof C as ModeOf<C[K]> extends 'optional' ? K : never]?: ValueOf<C[K]>;
  }
>;
