/**
 * `table(...)` and `authTable(...)`: a table declared once types its rows in rules, hooks and
 * custom-operation handlers.
 */
import { authColumns, column, Column, type ColumnMap, type ColumnSpec, type CreateMode, type CreateOf, type RowOf } from './columns.js';
import type { SignInInfo, SignInOptions } from './signin.js';
import type { HookContext, Jwt, Rule, Schema, ServerContext, TablePolicies, UntypedRow, UntypedSchema, Update, Verdict, Where } from './types.js';

/** Each rule gets the token and the operation (`where` typed by the row): see `RuleOperation`. */
export interface TableRules<R = UntypedRow> {
  canCreate?: Rule<R>;
  canList?: Rule<R>;
  canView?: Rule<R>;
  canUpdate?: Rule<R>;
  canDelete?: Rule<R>;
  canCount?: Rule<R>;
  /** Custom operations: a name is registered by having a rule here (docs/reference/data.md). */
  custom?: Record<string, Rule<R>>;
  /** `false` skips the row filter after a successful table-access check (docs/reference/rules-and-hooks.md). */
  requiresPerRowCheck?: boolean;
}

/*
 * Callbacks below are declared in method form on purpose: method parameters are checked
 * bivariantly, so a `Table<{ title: … }>` still fits where any table is accepted (`AnyTable`,
 * the compiled model) without erasing its row type to `any`. Callers still get full contextual typing.
 */
export interface RowRules<R> {
  /** The row filter: every row a request returns must pass, else the whole request is 403. */
  canView?(jwt: Jwt | null, row: R): Verdict;
  /** Checked inside the write's transaction; a denial writes nothing. */
  canUpdate?(jwt: Jwt | null, before: R, after: R): Verdict;
  canDelete?(jwt: Jwt | null, row: R): Verdict;
}

export interface CustomRequest<R> {
  where: Where<R>;
  updates: Update<R>[] | undefined;
  /** True for `/db/custom/{name}/many`. */
  many: boolean;
  limit: number | undefined;
}

/** The answer becomes `{"data": <answer>}`. Throw `UserError` for a 400, `NotFoundError` for a 404. */
export type CustomHandler<R> = { handle(ctx: ServerContext & { table: string }, request: CustomRequest<R>): unknown }['handle'];

/** `S` types the context's table access: untyped on a table, the project's tables inside `defineProject`. */
export interface TableHooks<R, C, S extends Schema = UntypedSchema> {
  /** May return a changed object. Throwing aborts with 400 HOOK_REJECTED. */
  beforeCreate?(ctx: HookContext<S>, object: C): C | void | Promise<C | void>;
  beforeUpdate?(ctx: HookContext<S>, change: { before: R; after: R; updates: Update<R>[] }): void | Promise<void>;
  beforeDelete?(ctx: HookContext<S>, row: R): void | Promise<void>;
  afterCreateSuccess?(ctx: HookContext<S>, row: R): void | Promise<void>;
  afterUpdateSuccess?(ctx: HookContext<S>, change: { before: R; after: R }): void | Promise<void>;
  afterDeleteSuccess?(ctx: HookContext<S>, row: R): void | Promise<void>;
  afterCreateError?(ctx: HookContext<S>, failure: { object: unknown; error: Error }): void | Promise<void>;
  afterUpdateError?(ctx: HookContext<S>, failure: { where: unknown; updates: unknown; error: Error }): void | Promise<void>;
  afterDeleteError?(ctx: HookContext<S>, failure: { where: unknown; error: Error }): void | Promise<void>;
}

export interface IndexSpec<K extends string = string> {
  columns: K[];
  unique?: boolean;
}

export interface TableOptions<C extends ColumnMap> {
  /** Id prefix: 2–8 of [a-z0-9]. */
  prefix: string;
  columns: C;
  indexes?: IndexSpec<keyof C & string>[];
  rules?: TableRules<RowOf<C>>;
  rowRules?: RowRules<RowOf<C>>;
  operations?: Record<string, CustomHandler<RowOf<C>>>;
  hooks?: TableHooks<RowOf<C>, CreateOf<C>>;
  policies?: TablePolicies;
}

export interface SignUpInput {
  email: string;
  object: Record<string, unknown>;
}

export interface AuthRules<R> {
  canSignUp?(input: SignUpInput): Verdict;
  /** Receives the user whose credentials matched; refuse unverified users here if wanted. */
  canSignIn?(user: R): Verdict;
  /** Denial still answers 200 and sends nothing (docs/reference/auth.md). */
  canPasswordReset?(input: { email: string }): Verdict;
}

export interface AuthHooks<R> {
  /** `info.method` says how: `password`, `otp`, `magicLink` or `oauth` (with `info.provider`). */
  onSignUp?(ctx: HookContext, user: R, info: SignInInfo): void | Promise<void>;
  onSignIn?(ctx: HookContext, user: R, info: SignInInfo): void | Promise<void>;
  onRefresh?(ctx: HookContext, user: R): void | Promise<void>;
  onLogout?(ctx: HookContext, user: { id: string }): void | Promise<void>;
}

/** What `authTable` adds to a table, kept on `Table.auth`; `R` is the user row. */
export interface AuthExtras<R> extends SignInOptions {
  /** Every row of an admin table signs in with `admin.isAdmin = true`. */
  admin?: boolean;
  /** Columns a client may set in sign-up's `object`. */
  signUpFields?: readonly string[];
  /** Custom claims added to the access token; they cannot override reserved claims. */
  claims?(user: R): Record<string, unknown> | Promise<Record<string, unknown>>;
  authRules?: AuthRules<R>;
  authHooks?: AuthHooks<R>;
}

export interface AuthOptions<C extends ColumnMap> extends TableOptions<C>, Omit<AuthExtras<RowOf<AuthColumns & C>>, 'signUpFields'> {
  /** Columns a client may set in sign-up's `object`. */
  signUpFields?: (keyof C & string)[];
}

export type AuthColumns = {
  email: Column<string, 'required'>;
  password: Column<never, 'required'>;
  isVerified: Column<boolean, 'managed'>;
  createdAt: Column<string, 'managed'>;
  updatedAt: Column<string, 'managed'>;
};

const ID_SPEC: ColumnSpec = { ...column.text().spec, kind: 'id', unique: true };

/** A typed reference to a table's column, used to declare views. */
export class ColumnRef<T> {
  declare readonly __value: T;
  constructor(
    readonly table: string,
    readonly column: string,
    readonly spec: ColumnSpec,
  ) {
    Object.freeze(this);
  }
  /** For columns reached through a left join. */
  nullable(): ColumnRef<T | null> {
    return new ColumnRef(this.table, this.column, { ...this.spec, nullable: true });
  }
}

/** `N` is the table's name as a literal type, so a project's tables can be looked up by name (`SchemaOf`). */
export class Table<C extends ColumnMap = ColumnMap, N extends string = string> {
  readonly kind = 'table' as const;
  declare readonly $row: RowOf<C>;
  declare readonly $create: CreateOf<C>;
  readonly auth: AuthExtras<RowOf<C>> | undefined;

  constructor(
    readonly name: N,
    readonly options: TableOptions<C>,
    auth?: AuthExtras<RowOf<C>>,
  ) {
    this.auth = auth;
    Object.freeze(this);
  }

  get columns(): C {
    return this.options.columns;
  }

  /** A column of this table for a view's `select` or `joins`. */
  col<K extends (keyof C & string) | 'id'>(name: K): ColumnRef<K extends 'id' ? string : RowOf<C>[K & keyof RowOf<C>]> {
    const spec = name === 'id' ? ID_SPEC : (this.options.columns[name] as Column<unknown, CreateMode> | undefined)?.spec;
    if (!spec) throw new Error(`table ${this.name} has no column ${name}`);
    return new ColumnRef(this.name, name, spec);
  }
}

/**
 * Any declared table, whatever its columns: what projects, views and the compiler accept. It is a
 * structural shape rather than `Table<ColumnMap>` because `keyof C` (index and sign-up columns)
 * makes `Table<C>` invariant in `C`; row-typed callbacks are erased to `UntypedRow` here, which the
 * method-form callbacks above allow without a cast.
 */
export interface AnyTable {
  readonly kind: 'table';
  readonly name: string;
  readonly columns: ColumnMap;
  readonly options: Omit<TableOptions<ColumnMap>, 'indexes' | 'rowRules' | 'operations' | 'hooks'> & {
    indexes?: IndexSpec[];
    rowRules?: RowRules<UntypedRow>;
    operations?: Record<string, CustomHandler<UntypedRow>>;
    hooks?: TableHooks<UntypedRow, Record<string, unknown>>;
  };
  readonly auth: AuthExtras<UntypedRow> | undefined;
}

export function table<C extends ColumnMap, N extends string>(name: N, options: TableOptions<C>): Table<C, N> {
  return new Table(name, options);
}

/** An auth table: `email`, `password`, `isVerified`, `createdAt`, `updatedAt` plus the project's columns. */
export function authTable<C extends ColumnMap, N extends string>(name: N, options: AuthOptions<C>): Table<AuthColumns & C, N> {
  const { admin, signUpFields, claims, authRules, authHooks, otp, magicLink, oauth, columns, ...rest } = options;
  const all = {
    email: authColumns.email(),
    password: authColumns.password(),
    isVerified: authColumns.isVerified(),
    createdAt: column.createdAt(),
    updatedAt: column.updatedAt(),
    ...columns,
  } as AuthColumns & C;
  return new Table<AuthColumns & C, N>(name, { ...(rest as unknown as TableOptions<AuthColumns & C>), columns: all }, {
    admin,
    signUpFields,
    claims,
    authRules,
    authHooks,
    otp,
    magicLink,
    oauth,
  } as AuthExtras<RowOf<AuthColumns & C>>);
}
