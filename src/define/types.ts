/**
 * Types shared by rules, hooks and handlers: the decoded token, the where grammar (docs/reference/data.md),
 * update forms, rate-limit policies and the trusted context handed to hooks.
 */

/** The decoded access token (docs/reference/auth.md). Custom claims sit beside the reserved ones. */
export interface Jwt {
  sub: string;
  userId: string;
  table: string;
  admin: { isAdmin: boolean };
  iat: number;
  exp: number;
  jti: string;
  [claim: string]: unknown;
}

/**
 * What a table rule is asked to allow (docs/reference/rules-and-hooks.md). `where` is the filter as
 * the client sent it, before it is checked: top-level keys are ANDed, so a rule may require one
 * (`op.where?.ownerId?.eq === jwt?.userId`) to keep counts and list 403s from telling anything
 * about other users' rows; anything else in it only narrows further. Undefined when the body has
 * none (create) or it is not an object.
 */
export interface RuleOperation<R = UntypedRow> {
  readonly op: 'get' | 'list' | 'count' | 'create' | 'createMany' | 'update' | 'updateMany' | 'delete' | 'deleteMany' | 'custom' | 'customMany' | 'streamOne' | 'streamList' | 'streamCount';
  readonly table: string;
  readonly where: Where<R> | undefined;
  /** The custom operation's name, for custom and customMany. */
  readonly custom?: string;
}

/**
 * A rule answers a boolean, or a promise of one. Unset means deny. A rule of the token alone
 * (`(jwt) => …`) is cached per token; one that declares the operation (`(jwt, op) => …`) runs on
 * every request. Method form: checked bivariantly, so a typed table's rules fit any table.
 */
export type Rule<R = UntypedRow> = { rule(jwt: Jwt | null, op: RuleOperation<R>): boolean | Promise<boolean> }['rule'];
export type Verdict = boolean | Promise<boolean>;

type Item<T> = T extends readonly (infer I)[] ? I : never;

export interface Condition<T> {
  eq?: T | null;
  ne?: T | null;
  gt?: T;
  gte?: T;
  lt?: T;
  lte?: T;
  in?: T[];
  nin?: T[];
  contains?: string;
  startsWith?: string;
  endsWith?: string;
  isNull?: boolean;
  has?: Item<T>;
}

/** The where grammar of docs/reference/data.md, typed by the row. */
export type Where<R = Record<string, unknown>> = { [K in keyof R]?: Condition<NonNullable<R[K]>> } & {
  and?: Where<R>[];
  or?: Where<R>[];
  not?: Where<R>;
};

export type UpdateValue<T> = T | null | { increment: number } | { decrement: number } | { add: Item<T> } | { remove: Item<T> };

export type Update<R = Record<string, unknown>> = {
  [K in keyof R & string]: { column: K; value: UpdateValue<R[K]> };
}[keyof R & string];

export interface OrderBy<R = Record<string, unknown>> {
  column: keyof R & string;
  direction?: 'asc' | 'desc';
}

export interface ListOptions<R = Record<string, unknown>> {
  where?: Where<R>;
  limit?: number;
  offset?: number;
  orderBy?: OrderBy<R>[];
}

/** `window` is milliseconds or a string such as "10s", "1m", "1h". */
export interface RateLimitPolicy {
  maxRequests: number;
  window: number | string;
}

/** `null` removes the limit for that operation; absent means the project default (100 per minute). */
export type PolicySetting = RateLimitPolicy | null;

export interface TablePolicies {
  get?: PolicySetting;
  list?: PolicySetting;
  count?: PolicySetting;
  create?: PolicySetting;
  update?: PolicySetting;
  delete?: PolicySetting;
  custom?: Record<string, PolicySetting>;
  signUp?: PolicySetting;
  signIn?: PolicySetting;
  refresh?: PolicySetting;
  verifyEmail?: PolicySetting;
  confirm?: PolicySetting;
  passwordReset?: PolicySetting;
  /** docs/reference/auth.md: `/auth/otp/send` and `/auth/otp/verify`. */
  otp?: PolicySetting;
  magicLink?: PolicySetting;
  /** `/auth/oauth/{provider}/start`. */
  oauth?: PolicySetting;
}

export interface Logger {
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
  debug(obj: object | string, msg?: string): void;
}

export interface EmailMessage {
  to: string | string[];
  subject?: string;
  text?: string;
  html?: string;
  /** A template name (built-in: `verifyEmail`, `resetPassword`) with its variables. */
  template?: string;
  variables?: Record<string, unknown>;
}

/** What `ctx.push.send` takes (docs/reference/push.md): the target users' registered devices receive it. */
export type PushMessage = ({ userId: string; userIds?: never } | { userIds: string[]; userId?: never }) & {
  title: string;
  body: string;
  /** String values reach FCM as they are; others are JSON-encoded there. */
  data?: Record<string, unknown>;
  badge?: number;
  sound?: string;
  /** How long a provider may hold the message for an offline device (default 4 weeks). */
  ttlSeconds?: number;
};

/** What `ctx.push.send` answers: how many device deliveries were queued. */
export interface PushQueued {
  queued: number;
}

/** A row whose table is not known to the type system: an `id` plus columns of unknown type. */
export type UntypedRow = Record<string, unknown> & { id: string };

/**
 * A project's tables as the type system sees them: table name → its row and its create object.
 * `SchemaOf<[typeof tasks, typeof users]>` builds it from the declared tables; hooks and cron
 * declared inside `defineProject` get a context typed by it, so `ctx.get('tasks', …)` answers a
 * task row. Without one (`UntypedSchema`) any name is accepted and rows are `UntypedRow`.
 */
export type Schema = Record<string, { row: { id: string }; create: object }>;
export type UntypedSchema = Record<string, { row: UntypedRow; create: Record<string, unknown> }>;

type Name<S extends Schema> = keyof S & string;
type RowIn<S extends Schema, N extends Name<S>> = S[N]['row'];
export interface MutateOptions {
  many?: boolean;
  limit?: number;
}

/**
 * Trusted server-side access handed to hooks and cron: no rules, no rate limits; the target table's
 * own hooks still fire. Mutations are queued behind the current write and capped per request.
 */
export interface HookContext<S extends Schema = UntypedSchema> {
  readonly jwt: Jwt | null;
  get<N extends Name<S>>(table: N, where: Where<RowIn<S, N>>): Promise<RowIn<S, N> | null>;
  list<N extends Name<S>>(table: N, options?: ListOptions<RowIn<S, N>>): Promise<RowIn<S, N>[]>;
  count<N extends Name<S>>(table: N, where?: Where<RowIn<S, N>>): Promise<number>;
  readonly mutate: {
    create<N extends Name<S>>(table: N, object: S[N]['create']): void;
    update<N extends Name<S>>(table: N, where: Where<RowIn<S, N>>, updates: Update<RowIn<S, N>>[], options?: MutateOptions): void;
    delete<N extends Name<S>>(table: N, where: Where<RowIn<S, N>>, options?: MutateOptions): void;
  };
  readonly email: {
    send(message: EmailMessage): Promise<{ id: string }>;
    sendVerification(user: { id: string; email: string }, table?: string): Promise<void>;
    sendPasswordReset(user: { id: string; email: string }, table?: string): Promise<void>;
  };
  readonly push: { send(message: PushMessage): Promise<PushQueued> };
  readonly log: Logger;
}

/** What custom-operation handlers and cron get: the hook context plus writes that are awaited. */
export interface ServerContext<S extends Schema = UntypedSchema> extends HookContext<S> {
  readonly db: {
    create<N extends Name<S>>(table: N, object: S[N]['create']): Promise<RowIn<S, N>>;
    update<N extends Name<S>>(table: N, where: Where<RowIn<S, N>>, updates: Update<RowIn<S, N>>[], options?: MutateOptions): Promise<RowIn<S, N>[]>;
    delete<N extends Name<S>>(table: N, where: Where<RowIn<S, N>>, options?: MutateOptions): Promise<number>;
  };
}
