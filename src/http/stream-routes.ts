/**
 * /db/stream, /db/stream/list, /db/stream/count (SPEC §7). Steps 1–5 run before the response
 * starts, so a denial is an ordinary JSON error; the live engine then re-runs the query after
 * each committed change that can affect it, and `check` re-applies the pipeline per change: an
 * expired or revoked token, or a row now failing the row filter, ends the stream with an error.
 */
import { ApiError, toApiError } from '../core/errors.js';
import { checkDataSize } from '../core/response-size.js';
import { startLiveStream, type LiveKind } from '../live/index.js';
import { admit } from '../pipeline/index.js';
import { readData, rowsOf } from '../pipeline/execute/reads.js';
import { filterRows } from '../pipeline/filter-rows.js';
import type { DataOp } from '../pipeline/operation.js';
import type { RequestContext } from './context.js';
import { operationOf } from './data-routes.js';
import { setHeaders } from './respond.js';

const READ_KIND = { one: 'get', list: 'list', count: 'count' } as const;

export function streamRoute(kind: LiveKind, op: DataOp) {
  return async function handleStream(ctx: RequestContext): Promise<void> {
    const { app } = ctx;
    const rt = app.rt;
    const o = await operationOf(ctx, op);
    const { plan } = await admit(rt, o, (headers) => setHeaders(ctx.res, headers));
    if (plan.kind !== 'get' && plan.kind !== 'list' && plan.kind !== 'count') throw new ApiError('BAD_REQUEST');
    const since = app.live.version;
    const initial = await readData(rt, READ_KIND[kind], plan.read); //   4
    await filterRows(o.collection, o.jwt, rowsOf(READ_KIND[kind], initial)); // 5
    checkDataSize(initial, app.config.maxResponseBytes); // an ordinary 400 before the stream starts (SPEC §4)
    const jwt = o.jwt;
    const check = async (data: unknown): Promise<ApiError | null> => {
      try {
        if (jwt) {
          if (jwt.exp * 1000 <= Date.now()) return new ApiError('INVALID_TOKEN', 'The access token has expired');
          await rt.tokens.verify(o.authorization);
        }
        await filterRows(o.collection, jwt, rowsOf(READ_KIND[kind], data));
        return null;
      } catch (err) {
        return toApiError(err);
      }
    };
    startLiveStream(app.live, ctx.req, ctx.res, { query: { kind, plan: plan.read }, initial, since, ip: ctx.ip, check, heartbeatMs: app.config.streamHeartbeatMs });
  };
}
