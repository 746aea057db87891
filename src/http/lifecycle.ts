/**
 * One lifecycle for every declared route, stage by stage as docs/lifecycle.md draws it:
 *
 *   read the JSON body early (only when the rate-limit key is computed from it)
 *   1 rate limit          → 429 before anything else (SPEC §9); RateLimit-* set on every answer
 *   2 token, access, rule → 401 / 403 (SPEC §5, §8)
 *   3 input               → read the body (413, 415, 400), validate body / query / params (400)
 *   4 handler             → the service call
 *   answer                → {"data"}, 204, empty 200, 302, raw bytes or a stream to a sink
 */
import type { IncomingMessage } from 'node:http';
import { ApiError } from '../core/errors.js';
import type { Jwt } from '../define/types.js';
import { jsonBody } from './body.js';
import type { RequestContext } from './context.js';
import { replyKind, type BodySource, type DeclaredRoute, type EarlyRequest, type RateLimitKey, type Reply } from './declare.js';
import { sendData, sendNoContent, setHeaders } from './respond.js';
import type { Services } from './services.js';
import { responseSink } from './sink.js';

type Json = Record<string, unknown>;

/** Steps 1–2 for any route family: the one place rate limits, tokens and access are enforced. */
export async function admitRequest(s: Services, ctx: RequestContext, key: RateLimitKey | null, access: DeclaredRoute['declaration']['access']): Promise<Jwt | null> {
  if (key) {
    const limited = s.rt.limiter.enforce(ctx.ip, key.table, key.op); //                       1
    const headers = limited instanceof Promise ? await limited : limited;
    if (headers) setHeaders(ctx.res, headers);
  }
  if (access === 'public') return null; //                                                     2
  const jwt = await s.rt.tokens.verify(ctx.req.headers.authorization);
  if (access === 'optional') return jwt;
  if (!jwt) throw new ApiError('UNAUTHENTICATED');
  if (access === 'admin' && jwt.admin?.isAdmin !== true) throw new ApiError('FORBIDDEN');
  return jwt;
}

export async function runRoute(route: DeclaredRoute, ctx: RequestContext, s: Services): Promise<void> {
  const d = route.declaration;
  const readJson = () => jsonBody(ctx.req, ctx.search, s.config.maxBodyBytes);
  const isJson = d.body !== undefined && d.body !== 'none' && d.body !== 'raw';
  let body: Json | undefined = typeof d.rateLimit === 'function' && isJson ? await readJson() : undefined;
  const early: EarlyRequest = { body, params: ctx.params };
  const key = typeof d.rateLimit === 'function' ? d.rateLimit(early, s) : (d.rateLimit ?? null);
  const jwt = await admitRequest(s, ctx, key, d.access); //                                  1–2
  if (d.rule && (await d.rule(jwt, s, early)) !== true) throw new ApiError('FORBIDDEN');
  if (isJson && body === undefined) body = await readJson(); //                               3
  const v = route.validate;
  const query = queryOf(ctx.search);
  const input = {
    body: v.body ? v.body(body) : body,
    query: v.query ? v.query(query) : query,
    params: v.params ? v.params(ctx.params) : ctx.params,
    jwt,
    ip: ctx.ip,
    requestId: ctx.requestId,
    headers: ctx.req.headers,
    source: d.body === 'raw' ? bodySource(ctx.req) : undefined,
  };
  const out = await d.handler(input as never, s); //                                         4
  await answer(ctx, out);
}

function queryOf(search: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!search) return out;
  for (const [k, v] of new URLSearchParams(search)) if (!(k in out)) out[k] = v;
  return out;
}

function bodySource(req: IncomingMessage): BodySource {
  const length = req.headers['content-length'];
  return {
    contentType: req.headers['content-type'],
    contentLength: length === undefined ? undefined : Number(length),
    stream: req,
    [Symbol.asyncIterator]: () => req[Symbol.asyncIterator](),
  };
}

async function answer(ctx: RequestContext, out: unknown): Promise<void> {
  const { res } = ctx;
  const r = out as Reply & Record<string, never>;
  switch (replyKind(out)) {
    case undefined:
      return sendData(res, out);
    case 'noContent':
      return sendNoContent(res);
    case 'empty':
      res.writeHead(200, { 'content-length': 0 });
      return void res.end();
    case 'redirect':
      res.writeHead(302, { location: (r as Extract<Reply, { location: string }>).location, 'content-length': 0 });
      return void res.end();
    case 'raw': {
      const { status, headers, body } = r as Extract<Reply, { body: unknown }>;
      res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(body) });
      return void res.end(body);
    }
    case 'stream':
      return (r as Extract<Reply, { start: unknown }>).start(responseSink(res));
  }
}
