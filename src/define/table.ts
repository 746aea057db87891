/**
 * `table(...)` and `authTable(...)`: a table declared once types its rows in rules, hooks and
 * custom-operation handlers.
 */
import { authColumns, column, Column, type ColumnMap, type ColumnSpec, type CreateMode, type CreateOf, type RowOf } from './columns.js';
import type { SignInInfo, SignInOptions } from './signin.js';
import type { HookContext, Jwt, Rule, ServerContext, TablePolicies, Update, Verdict, Where } from './types.js';

export interface TableRules {
  canCreate?: Rule;
  canList?: Rule;
  canView?: Rule;
  canUpdate?: Rule;
  canDelete?: Rule;
  canCount?: Rule;
  /** Custom operations: a name is registered by having a rule here (SPEC §13.7). */
  custom?: Record<string, Rule>;
  /** `false` skips the row filter after a successful table-access check (seed, pipeline rule 4). */
  requiresPerRowCheck?: boolean;
}

export interface RowRules<R> {
  /** The row filter: every row a request returns must pass, else the whole request is 403. */
  canView?: (jwt: Jwt | null, row: R) => Verdict;
  /** Checked inside the write's transaction; a denial writes nothing. */
  canUpdate?: (jwt: Jwt | null, before: R, after: R) => Verdict;
  canDelete?: (jwt: Jwt | null, row: R) => Verdict;
}

export interface CustomRequest<R> {
  where: Where<R>;
  updates: Update<R>[] | undefined;
  /** True for `/db/custom/{name}/many`. */
  many: boolean;
  limit: number | undefined;
}

/** The answer becomes `{"data": <answer>}`. Throw `UserError` for a 400, `NotFoundError` for a 404. */
export type CustomHandler<R> = (ctx: ServerContext & { table: string }, request: CustomRequest<R>) => unknown;

export interface TableHooks<R, C> {
  /** May return a changed object. Throwing aborts with 400 HOOK_REJECTED. */
  beforeCreate?: (ctx: HookContext, object: C) => C | void | Promise<C | void>;
  beforeUpdate?: (ctx: HookContext, change: { before: R; after: R; updates: Update<R>[] }) => void | Promise<void>;
  beforeDelete?: (ctx: HookContext, row: R) => void | Promise<void>;
  afterCreateSuccess?: (ctx: HookContext, row: R) => void | Promise<void>;
  afterUpdateSuccess?: (ctx: HookContext, change: { before: R; after: R }) => void | Promise<void>;
  afterDeleteSuccess?: (ctx: HookContext, row: R) => void | Promise<void>;
  afterCreateError?: (ctx: HookContext, failure: { object: unknown; error: Error }) => void | Promise<void>;
  afterUpdateError?: (ctx: HookContext, failure: { where: unknown; updates: unknown; error: Error }) => void | Promise<void>;
  afterDeleteError?: (ctx: HookContext, failure: { where: unknown; error: Error }) => void | Promise<void>;
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
  rules?: TableRules;
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
  canSignUp?: (input: SignUpInput) => Verdict;
  /** Receives the user whose credentials matched; refuse unverified users here if wanted. */
  canSignIn?: (user: R) => Verdict;
  /** Denial still answers 200 and sends nothing (SPEC §13.3). */
  canPasswordReset?: (input: { email: string }) => Verdict;
}

export interface AuthHooks<R> {
  /** `info.method` says how: `password`, `otp`, `magicLink` or `oauth` (with `info.provider`). */
  onSignUp?: (ctx: HookContext, user: R, info: SignInInfo) => void | Promise<void>;
  onSignIn?: (ctx: HookContext, user: R, info: SignInInfo) => void | Promise<void>;
  onRefresh?: (ctx: HookContext, user: R) => void | Promise<void>;
  onLogout?: (ctx: HookContext, user: { id: string }) => void | Promise<void>;
}

export interface AuthOptions<C extends ColumnMap> extends TableOptions<C>, SignInOptions {
  /** Every row of an admin table signs in with `admin.isAdmin = true`. */
  admin?: boolean;
  /** Columns a client may set in sign-up's `object`. */
  signUpFields?: (keyof C & string)[];
  /** Custom claims added to the access token; they cannot override reserved claims. */
  claims?: (user: RowOf<AuthColumns & C>) => Record<string, unknown> | Promise<Record<string, unknown>>;
  authRules?: AuthRules<RowOf<AuthColumns & C>>;
  authHooks?: AuthHooks<RowOf<AuthColumns & C>>;
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

export class Table<C extends ColumnMap = ColumnMap> {
  readonly kind = 'table' as const;
  declare readonly $row: RowOf<C>;
  declare readonly $create: CreateOf<C>;
  readonly auth: Omit<AuthOptions<C>, keyof TableOptions<C>> | undefined;

  constructor(
    readonly name: string,
    readonly options: TableOptions<C>,
    auth?: Omit<AuthOptions<C>, keyof TableOptions<C>>,
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

export function table<C extends ColumnMap>(name: string, options: TableOptions<C>): Table<C> {
  return new Table(name, options);
}

/** An auth table: `email`, `password`, `isVerified`, `createdAt`, `updatedAt` plus the project's columns. */
export function authTable<C extends ColumnMap>(name: string, options: AuthOptions<C>): Table<AuthColumns & C> {
  const { admin, signUpFields, claims, authRules, authHooks, otp, magicLink, oauth, columns, ...rest } = options;
  const all = {
    email: authColumns.email(),
    password: authColumns.password(),
    isVerified: authColumns.isVerified(),
    createdAt: column.createdAt(),
    updatedAt: column.updatedAt(),
    ...columns,
  } as AuthColumns & C;
  return new Table<AuthColumns & C>(name, { ...(rest as unknown as TableOptions<AuthColumns & C>), columns: all }, {
    admin,
    signUpFields,
    claims,
    authRules,
    authHooks,
    otp,
    magicLink,
    oauth,
  } as Omit<AuthOptions<AuthColumns & C>, keyof TableOptions<AuthColumns & C>>);
}
