/**
 * /img routes (SPEC §10): rate limit (upload, view, delete on `_photos`), then the token, then the
 * photo service, which checks size and type before the photo rules.
 */
import type { RequestContext } from './context.js';
import { sendData, sendNoContent, setHeaders } from './respond.js';

const PHOTOS = '_photos';

async function admitPhoto(ctx: RequestContext, op: 'upload' | 'view' | 'delete') {
  const rt = ctx.services.rt;
  const limited = rt.limiter.enforce(ctx.ip, PHOTOS, op); // step 1
  const headers = limited instanceof Promise ? await limited : limited;
  if (headers) setHeaders(ctx.res, headers);
  return rt.tokens.verify(ctx.req.headers.authorization); // step 2 (the photo rules run in the service)
}

export async function uploadPhoto(ctx: RequestContext): Promise<void> {
  const jwt = await admitPhoto(ctx, 'upload');
  sendData(ctx.res, await ctx.services.photos.upload(ctx.req, jwt));
}

export async function servePhoto(ctx: RequestContext): Promise<void> {
  const jwt = await admitPhoto(ctx, 'view');
  await ctx.services.photos.serve(ctx.req, ctx.res, ctx.params.id!, jwt, new URLSearchParams(ctx.search).get('thumb'));
}

export async function deletePhoto(ctx: RequestContext): Promise<void> {
  const jwt = await admitPhoto(ctx, 'delete');
  await ctx.services.photos.delete(ctx.params.id!, jwt);
  sendNoContent(ctx.res);
}
