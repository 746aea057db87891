/** TypeBox schemas of the admin API under /dashboard/ (docs/reference/dashboard.md); the OpenAPI document is generated from them. */
import { Type, type TSchema } from '@sinclair/typebox';

const int = Type.Integer({ minimum: 0 });
const num = Type.Number({ minimum: 0 });
const str = Type.String();
const time = Type.String({ format: 'date-time' });
const nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const closed = { additionalProperties: false } as const;

export const TableName = Type.String({ minLength: 1, maxLength: 64, description: 'a table or view, internal `_` tables included' });
export const RowId = Type.String({ minLength: 1, maxLength: 64 });
export const Row = Type.Record(Type.String(), Type.Unknown(), { description: 'A row in the JSON form of its table (docs/reference/columns.md)' });
const Digits = Type.String({ pattern: '^[0-9]{1,10}$' });

export const ListBody = Type.Object(
  {
    table: TableName,
    where: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'the where grammar (docs/reference/data.md)' })),
    limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
    offset: Type.Optional(int),
    order_by: Type.Optional(Type.Array(Type.Object({ column: str, direction: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])) }, closed), { maxItems: 16 })),
  },
  { ...closed, description: 'The body of /db/list: table rules and row rules do not apply' },
);
export const RowPage = Type.Object({ items: Type.Array(Row), total: int });
export const CreateBody = Type.Object({ table: TableName, object: Type.Record(Type.String(), Type.Unknown()) }, closed);
export const UpdateBody = Type.Object(
  { table: TableName, id: RowId, values: Type.Record(Type.String(), Type.Unknown(), { description: 'column → new value; errors point at /values/<column>' }) },
  closed,
);
export const RowRef = Type.Object({ table: TableName, id: RowId }, closed);

export const Column = Type.Object({
  name: str,
  kind: str,
  nullable: Type.Boolean(),
  default: Type.Unknown({ description: 'the JSON default when hasDefault; "(computed)" for a function default' }),
  hasDefault: Type.Boolean(),
  required: Type.Boolean(),
  managed: Type.Boolean({ description: 'set by the server' }),
  unique: Type.Boolean(),
  references: nullable(str),
  of: nullable(str),
  watches: nullable(str),
  sortable: Type.Boolean(),
});
export const Collection = Type.Object({
  name: str,
  kind: Type.Union([Type.Literal('table'), Type.Literal('view')]),
  internal: Type.Boolean(),
  auth: nullable(Type.Object({ admin: Type.Boolean() })),
  prefix: nullable(str),
  columns: Type.Array(Column),
  indexes: Type.Array(Type.Object({ columns: Type.Array(str), unique: Type.Boolean() })),
  reads: Type.Array(str),
});

export const Sample = Type.Object({ at: int, requests: int, clientErrors: int, serverErrors: int, p95Ms: num, streams: int, writeQueue: int });

export const CronRun = Type.Object({
  job: str,
  trigger: Type.Union([Type.Literal('schedule'), Type.Literal('manual')]),
  startedAt: time,
  finishedAt: nullable(time),
  status: Type.Union([Type.Literal('running'), Type.Literal('ok'), Type.Literal('error')]),
  error: nullable(str),
  durationMs: nullable(num),
});
export const CronJob = Type.Object({
  name: str,
  schedule: str,
  lastRunAt: nullable(time),
  lastStatus: nullable(str),
  lastError: nullable(str),
  nextRunAt: nullable(time),
  running: Type.Boolean(),
  runs: Type.Array(CronRun, { description: 'newest first' }),
});

export const LogQuery = Type.Object(
  {
    statusClass: Type.Optional(Type.Union(['1xx', '2xx', '3xx', '4xx', '5xx'].map((c) => Type.Literal(c)))),
    route: Type.Optional(Type.String({ maxLength: 256, description: 'part of the route, e.g. /db/list' })),
    requestId: Type.Optional(Type.String({ maxLength: 128 })),
    limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$', description: '1 to 2000 (default 200)' })),
  },
  closed,
);
export const LogEntry = Type.Object({ at: int, method: str, route: str, status: int, latencyMs: num, requestId: str, ip: str });

export const PhotoQuery = Type.Object({ limit: Type.Optional(Digits), offset: Type.Optional(Digits) }, closed);
export const Photo = Type.Object({ id: str, mimeType: str, size: int, ownerId: nullable(str), width: int, height: int, createdAt: time });

export const LiveState = Type.Object({
  open: Type.Integer({ minimum: 0, description: 'open stream routes and /db/live subscriptions together (the caps count both)' }),
  sockets: Type.Integer({ minimum: 0, description: 'of which /db/live subscriptions' }),
  queries: int,
  memoryBytes: Type.Integer({ minimum: 0, description: 'bytes counted against maxLiveMemoryBytes (an upper bound between refreshes)' }),
  streams: Type.Array(Type.Object({ route: str, table: str, open: int }), { description: 'by route (`GET /db/stream…` or `WS /db/live get|list|count`) and table' }),
});
