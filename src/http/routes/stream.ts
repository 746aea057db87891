/**
 * /db/stream, /db/stream/list, /db/stream/count (SPEC §7). Steps 1–5 run before the response
 * starts, so a denial is an ordinary JSON error; the live engine then re-runs the query after
 * each committed change that can affect it, and `check` re-applies the pipeline per change: an
 * expired or revoked token, or a row now failing the row filter, ends the stream with an error.
 */
import { Type } from '@sinclair/typebox';
import { ApiError, toApiError } from '../../core/errors.js';
import { checkDataSize } from '../../core/response-size.js';
import { startLiveStream, type LiveKind } from '../../live/index.js';
import { readData, rowsOf } from '../../pipeline/execute/reads.js';
import { filterRows } from '../../pipeline/filter-rows.js';
import { authorizeAndPlan } from '../../pipeline/index.js';
import type { DataOp } from '../../pipeline/operation.js';
import { defineRoute, modelSchema, stream } from '../declare.js';
import { dataKey, operationFor } from './data.js';
import type { Runtime } from '../../core/runtime.js';

const READ_KIND = { one: 'get', list: 'list', count: 'count' } as const;

const NOTE =
  'One payload on connect, then one after each committed change that alters the result; identical results are not pushed twice. Rules, rate limit and the first query run before the response starts, so a denial is an ordinary JSON error.';

/**
 * The per-change checks (token expiry and revocation, row filter). Built here, outside the
 * handler, so the closure does not share the handler's scope and keep the first payload alive for
 * the stream's whole life (docs/hardening.md "Live memory").
 */
function pipelineCheck(rt: Runtime, o: ReturnType<typeof operationFor>, kind: LiveKind) {
  const jwt = o.jwt;
  const authorization = o.authorization;
  const collection = o.collection;
  return async (value: unknown): Promise<ApiError | null> => {
    try {
      if (jwt) {
        if (jwt.exp * 1000 <= Date.now()) return new ApiError('INVALID_TOKEN', 'The access token has expired');
        await rt.tokens.verify(authorization);
      }
      await filterRows(collection, jwt, rowsOf(READ_KIND[kind], value));
      return null;
    } catch (err) {
      return toApiError(err);
    }
  };
}

function streamRoute(path: string, kind: LiveKind, op: DataOp, summary: string, body: string, data: string, description: string, rule: string) {
  return defineRoute({
    method: 'GET',
    path,
    family: 'stream',
    summary,
    description: `${NOTE} ${rule}`,
    operationId: op,
    access: 'optional',
    rateLimit: dataKey(op),
    body: modelSchema(body),
    responses: {
      200: {
        description,
        headers: { 'Cache-Control': Type.Literal('no-cache'), 'X-Accel-Buffering': Type.Literal('no') },
        content: { 'text/event-stream': modelSchema(`SseOf${data}`), 'application/x-ndjson': modelSchema(`NdjsonOf${data}`) },
      },
    },
    errors: ['NOT_FOUND', 'RESPONSE_TOO_LARGE'],
    handler: async (input, s) => {
      const rt = s.rt;
      const o = operationFor(rt.model, op, input as never);
      const plan = await authorizeAndPlan(o); //                                        2–3
      if (plan.kind !== 'get' && plan.kind !== 'list' && plan.kind !== 'count') throw new ApiError('BAD_REQUEST');
      const admitted = s.live.admit({ kind, plan: plan.read }); // a full live memory budget refuses before reading
      try {
        const since = s.live.version;
        const initial = await readData(rt, READ_KIND[kind], plan.read); //                4
        await filterRows(o.collection, o.jwt, rowsOf(READ_KIND[kind], initial)); //        5
        // Payloads are capped (SPEC §4): the first is an ordinary 400 before the stream starts; the
        // live engine ends a stream whose re-run passes the cap (server/app.ts).
        checkDataSize(initial, s.config.maxResponseBytes);
        const check = pipelineCheck(rt, o, kind);
        const accept = input.headers.accept as string | undefined;
        // With workers the caps count the whole server (docs/reference/scaling.md): a place first.
        const release = s.streamCaps ? await s.streamCaps.acquire(input.ip) : undefined;
        if (release === null) throw new ApiError('RATE_LIMITED', 'Too many open streams', { headers: { 'Retry-After': '1' } });
        return stream((sink) => {
          try {
            const live = startLiveStream(s.live, sink, { query: { kind, plan: plan.read }, initial, since, ip: input.ip, check, accept, heartbeatMs: s.config.streamHeartbeatMs });
            if (release) live.onClose(release);
          } catch (err) {
            release?.();
            throw err;
          }
        });
      } finally {
        // The first read is over (its result now goes to the stream, counted by `subscribe`).
        admitted();
      }
    },
  });
}

export const streamRoutes = [
  streamRoute(
    '/db/stream',
    'one',
    'streamOne',
    'Stream the first row matching `where`',
    'GetBody',
    'NullableRow',
    '`{"data": row}`, or `{"data": null}` while no row matches',
    'Rule: canView; policy: get.',
  ),
  streamRoute('/db/stream/list', 'list', 'streamList', 'Stream a page of rows with its total', 'ListBody', 'Page', '`{"data": {"items", "total"}}` per payload', 'Rule: canList; policy: list.'),
  streamRoute('/db/stream/count', 'count', 'streamCount', 'Stream the count of matching rows', 'CountBody', 'Count', '`{"data": n}` per payload', 'Rule: canCount; policy: count.'),
];
