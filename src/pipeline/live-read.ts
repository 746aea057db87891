/**
 * The live read: one operation with two transports, the stream routes (`/db/stream`, `…/list`,
 * `…/count`, one response per query) and `/db/live` (one WebSocket, many subscriptions); see
 * docs/reference/live.md. Both run the same stages in the same order:
 *
 *   1 rate limit → 2 token + rules → 3 plan → 4 first query → 5 row filter → register with the
 *   live engine (its caps count streams and subscriptions together) → pushes after commits,
 *   each re-checked here (token expiry and revocation, row filter)
 *
 * A stream route gets steps 1–2's front from the route lifecycle (http/lifecycle.ts);
 * `admitLiveRead` is the same front for a message on the socket. Everything after the front
 * is `openLiveRead`, shared by both.
 */
import { ApiError, toApiError } from '../core/errors.js';
import { checkDataSize } from '../core/response-size.js';
import type { Runtime } from '../core/runtime.js';
import type { Jwt } from '../define/types.js';
import type { LiveEngine, LiveKind, LiveQuery, Subscriber } from '../live/index.js';
import { admitCaller, type Caller } from './admit.js';
import { authorize } from './authorize.js';
import { readData, rowsOf } from './execute/reads.js';
import { filterRows } from './filter-rows.js';
import type { DataOp, Operation } from './operation.js';
import { planOperation } from './plan/index.js';
import { rateLimitKey } from './rate-limit.js';
import { collectionOrThrow } from './resolve.js';

/** The stream operation of each live kind (its rule and its rate-limit policy, docs/reference/rate-limits.md). */
export const LIVE_OP: Record<LiveKind, DataOp> = { one: 'streamOne', list: 'streamList', count: 'streamCount' };
const READ_KIND = { one: 'get', list: 'list', count: 'count' } as const;

/** An admitted, planned live read whose first payload is ready, not yet registered with the engine. */
export interface LiveRead {
  readonly query: LiveQuery;
  /** The data of the first payload (row | null, {items, total}, n), row-filtered and size-checked. */
  readonly initial: unknown;
  /** `engine.version` read before the first query ran (Subscriber.since). */
  readonly since: number;
  /** The per-change checks (Subscriber.check): token expiry and revocation, then the row filter. */
  check(data: unknown): Promise<ApiError | null>;
  /**
   * A new token for this read (`auth` on /db/live): the table rule and the row filter run again
   * on the last payload with it. Answers the error that ends the read, or null.
   */
  reauthorize(jwt: Jwt | null, authorization: string | undefined): Promise<ApiError | null>;
}

/**
 * Steps 1–2's front for a read that did not come through the route lifecycle: resolve the table
 * (400 missing, 404 unknown), count one request of the stream route's policy, verify the token.
 * The same functions the lifecycle calls (admitCaller), in the same order.
 */
export async function admitLiveRead(rt: Runtime, caller: Caller, kind: LiveKind, body: Record<string, unknown>): Promise<Operation> {
  const op = LIVE_OP[kind];
  const collection = collectionOrThrow(rt.model, body.table);
  const admitted = admitCaller(rt, caller, rateLimitKey({ op, collection, custom: undefined }), 'optional', NO_HEADERS); // 1–2
  const jwt = admitted instanceof Promise ? await admitted : admitted;
  return { op, collection, body, authorization: caller.authorization, jwt, ip: caller.ip };
}

/** A socket has no per-message headers: RateLimit-* are for HTTP answers only. */
const NO_HEADERS = { setHeader: () => undefined };

/**
 * Steps 2–5 for an admitted stream operation (`o.jwt` verified). `reauthorizable` (/db/live): the
 * read keeps its last payload for `reauthorize` when the table has a row filter; a stream route
 * never re-authorizes, so it keeps nothing (the first payload must not live as long as the
 * stream; docs/hardening.md "Live memory").
 */
export async function openLiveRead(rt: Runtime, engine: Pick<LiveEngine, 'version' | 'admit'>, o: Operation, maxResponseBytes: number, reauthorizable = false): Promise<LiveRead> {
  const kind = kindOf(o.op);
  await authorize(o); //                                                                   2
  const plan = await planOperation(o); //                                                  3
  if (plan.kind !== 'get' && plan.kind !== 'list' && plan.kind !== 'count') throw new ApiError('BAD_REQUEST');
  // A full live memory budget refuses before reading; the first read's expected size is held
  // against it until the read is over (docs/hardening.md "Live memory").
  const admitted = engine.admit({ kind, plan: plan.read });
  try {
    const since = engine.version;
    const initial = await readData(rt, READ_KIND[kind], plan.read); //                      4
    await filterRows(o.collection, o.jwt, rowsOf(READ_KIND[kind], initial)); //              5
    // Payloads are capped (docs/reference/configuration.md, maxResponseBytes): the first is an
    // ordinary 400 before anything is registered; the engine ends a read whose re-run passes it.
    checkDataSize(initial, maxResponseBytes);
    return liveRead(rt, o, kind, { kind, plan: plan.read }, initial, since, reauthorizable && o.collection.rowFiltered);
  } finally {
    admitted();
  }
}

/** Built outside openLiveRead so the closures share no scope with the first payload. */
function liveRead(rt: Runtime, o: Operation, kind: LiveKind, query: LiveQuery, initial: unknown, since: number, keepLast: boolean): LiveRead {
  let jwt = o.jwt;
  let authorization = o.authorization;
  let last: unknown = keepLast ? initial : undefined;
  const rows = (data: unknown) => rowsOf(READ_KIND[kind], data);
  return {
    query,
    initial,
    since,
    async check(data) {
      if (keepLast) last = data;
      try {
        if (jwt) {
          if (jwt.exp * 1000 <= Date.now()) return new ApiError('INVALID_TOKEN', 'The access token has expired');
          await rt.tokens.verify(authorization);
        }
        await filterRows(o.collection, jwt, rows(data));
        return null;
      } catch (err) {
        return toApiError(err);
      }
    },
    async reauthorize(next, header) {
      jwt = next;
      authorization = header;
      try {
        await authorize({ ...o, jwt: next, authorization: header });
        await filterRows(o.collection, next, rows(last));
        return null;
      } catch (err) {
        return toApiError(err);
      }
    },
  };
}

function kindOf(op: DataOp): LiveKind {
  if (op === 'streamOne') return 'one';
  if (op === 'streamList') return 'list';
  if (op === 'streamCount') return 'count';
  throw new Error(`openLiveRead: ${op} is not a stream operation`);
}

/** What the engine needs of a read to push to it: its query, first data and checks. */
export function subscriberFields(read: LiveRead): Pick<Subscriber, 'initial' | 'since' | 'check'> {
  return { initial: read.initial, since: read.since, check: (data) => read.check(data) };
}
