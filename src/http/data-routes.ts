/** Handlers of the /db routes: request → Operation → pipeline → answer. */
import { ApiError } from '../core/errors.js';
import type { DataOp, Operation } from '../pipeline/operation.js';
import { runPipeline } from '../pipeline/index.js';
import { collectionOrThrow } from '../pipeline/resolve.js';
import { jsonBody } from './body.js';
import type { RequestContext } from './context.js';
import { sendData, sendDataCapped, sendNoContent, setHeaders } from './respond.js';

/** Parses the body and resolves the table: 400 for a missing table, 404 for an unknown one. */
export async function operationOf(ctx: RequestContext, op: DataOp): Promise<Operation> {
  const { app } = ctx;
  const body = await jsonBody(ctx.req, ctx.search, app.config.maxBodyBytes);
  const collection = collectionOrThrow(app.rt.model, body.table);
  let custom: string | undefined;
  if (op === 'custom' || op === 'customMany') {
    custom = ctx.params.name!;
    // Views: 403 before the registry (SPEC §13.7). Tables: an unregistered name is 404 before
    // rate limiting, so unknown names cost no counter (seed, data operations rule 1).
    if (collection.kind === 'view') throw new ApiError('FORBIDDEN');
    if (!Object.hasOwn(collection.rules?.custom ?? {}, custom)) throw new ApiError('NOT_FOUND', `No custom operation named "${custom.slice(0, 64)}"`);
  }
  return { op, collection, body, authorization: ctx.req.headers.authorization, jwt: null, ip: ctx.ip, custom };
}

export function dataRoute(op: DataOp) {
  return async function handleData(ctx: RequestContext): Promise<void> {
    const o = await operationOf(ctx, op);
    const result = await runPipeline(ctx.app.rt, o, (headers) => setHeaders(ctx.res, headers));
    if (result.noContent) sendNoContent(ctx.res);
    // Reads are capped (SPEC §4); a write's answer is sent whole: it has already committed.
    else if (op === 'list' || op === 'get') sendDataCapped(ctx.res, result.data, ctx.app.config.maxResponseBytes, op === 'list');
    else sendData(ctx.res, result.data);
  };
}
