/**
 * The /db routes (docs/reference/data.md). Every body names its table or view in
 * `table`; the body's shape is per table, so it is described by the project model
 * (`modelSchema`) and checked by the pipeline's plan stage (step 3), after the rules (docs/reference/rules-and-hooks.md:
 * 403 before body-shape errors). Step 1 keys by the table the body names; a missing table is
 * 400 and an unknown one 404 before any counter moves.
 */
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../core/errors.js';
import type { ProjectModel } from '../../core/model.js';
import type { DataOp, Operation } from '../../pipeline/operation.js';
import { rateLimitKey, runPipeline, type PipelineResult } from '../../pipeline/index.js';
import { collectionOrThrow } from '../../pipeline/resolve.js';
import { defineRoute, modelSchema, noContent, type EarlyRequest, type Method, type ResponseSpec, type RouteInput } from '../declare.js';

/** Resolves the table (400 missing, 404 unknown); custom: a view is 403, an unregistered name 404. */
function targetOf(model: ProjectModel, op: DataOp, body: Record<string, unknown>, params: Readonly<Record<string, string>>): Pick<Operation, 'op' | 'collection' | 'custom'> {
  const collection = collectionOrThrow(model, body.table);
  if (op !== 'custom' && op !== 'customMany') return { op, collection, custom: undefined };
  const custom = params.name!;
  // Views: 403 before the registry (docs/reference/data.md). Tables: an unregistered name is 404 before
  // rate limiting, so unknown names cost no counter (docs/reference/data.md).
  if (collection.kind === 'view') throw new ApiError('FORBIDDEN');
  if (!Object.hasOwn(collection.rules?.custom ?? {}, custom)) throw new ApiError('NOT_FOUND', `No custom operation named "${custom.slice(0, 64)}"`);
  return { op, collection, custom };
}

/** Step 1's key for a data or stream route: the table and operation the body names. */
export const dataKey = (op: DataOp) => (early: EarlyRequest, s: { rt: { model: ProjectModel } }) => rateLimitKey(targetOf(s.rt.model, op, early.body!, early.params));

type DataInput = RouteInput<Record<string, unknown>, unknown, Readonly<Record<string, string>>>;

/** The Operation a handler hands the pipeline, with the token steps 1–2 verified. */
export function operationFor(model: ProjectModel, op: DataOp, input: DataInput): Operation {
  const { collection, custom } = targetOf(model, op, input.body, input.params);
  return { op, collection, body: input.body, authorization: input.headers.authorization as string | undefined, jwt: input.jwt, ip: input.ip, custom };
}

const replyOf = (result: PipelineResult) => (result.noContent ? noContent() : result.data);

const CustomName = Type.Object({ name: Type.String({ 'x-tablebase-model': 'CustomName', maxLength: 256 }) });

function data(method: Method, path: string, op: DataOp, summary: string, body: string, ok: ResponseSpec, description: string, status: 200 | 204 = 200) {
  const write = method !== 'GET';
  return defineRoute({
    method,
    path,
    family: 'data',
    summary,
    description,
    operationId: op,
    access: 'optional',
    rateLimit: dataKey(op),
    body: modelSchema(body),
    params: op === 'custom' || op === 'customMany' ? CustomName : undefined,
    responses: { [status]: ok },
    capped: op === 'list' ? 'list' : op === 'get' ? 'one' : undefined,
    errors: write ? ['NOT_FOUND', 'CONFLICT', 'UNAVAILABLE', ...(op.startsWith('custom') ? (['NOT_IMPLEMENTED'] as const) : [])] : ['NOT_FOUND'],
    // A promise chain, not an async function: one frame and one await fewer per request.
    handler: (input, s) => runPipeline(s.rt, operationFor(s.rt.model, op, input as DataInput)).then(replyOf),
  });
}

export const dataRoutes = [
  data('GET', '/db', 'get', 'Get the first row matching `where`', 'GetBody', modelSchema('Row'), 'No match is 404 (docs/reference/data.md). Rule: canView; policy: get.'),
  data('GET', '/db/list', 'list', 'List rows with `items` and `total`', 'ListBody', modelSchema('Page'), 'Rule: canList; policy: list.'),
  data('GET', '/db/count', 'count', 'Count matching rows', 'CountBody', modelSchema('Count'), 'Counts are not row-filtered (docs/reference/data.md). Rule: canCount; policy: count.'),
  data('POST', '/db', 'create', 'Create a row', 'CreateBody', modelSchema('TableRow'), 'Unknown keys and a client `id` are 400; server-managed timestamps are ignored. Views: 403. Rule: canCreate.'),
  data('POST', '/db/many', 'createMany', 'Create rows in one transaction', 'CreateManyBody', modelSchema('TableRows'), 'All or nothing. Rule: canCreate.'),
  data('PATCH', '/db', 'update', 'Update the first matching row', 'UpdateBody', modelSchema('TableRow'), 'No match is 404. Rule: canUpdate (and the row rule canUpdate inside the transaction).'),
  data('PATCH', '/db/many', 'updateMany', 'Update matching rows', 'UpdateManyBody', modelSchema('TableRows'), 'Rule: canUpdate.'),
  data('DELETE', '/db', 'delete', 'Delete the first matching row', 'DeleteBody', 'Deleted; no body', 'No match is 404. Rule: canDelete.', 204),
  data('DELETE', '/db/many', 'deleteMany', 'Delete matching rows', 'DeleteManyBody', 'Deleted (even when nothing matched); no body', 'Rule: canDelete.', 204),
  data(
    'PATCH',
    '/db/custom/:name',
    'custom',
    'Run a custom operation',
    'CustomBody',
    modelSchema('CustomResult'),
    'Views: 403 before the registry. Rule: the named custom rule; policy: custom:<name>.',
  ),
  data(
    'PATCH',
    '/db/custom/:name/many',
    'customMany',
    'Run a custom operation on many rows',
    'CustomBody',
    modelSchema('CustomResult'),
    'Views: 403 before the registry. Rule: the named custom rule; policy: custom:<name>.',
  ),
];
