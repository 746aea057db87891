/** How hook outcomes map to answers (docs/reference/conventions.md, docs/reference/rules-and-hooks.md). */
import { ApiError } from '../../core/errors.js';
import type { Runtime } from '../../core/runtime.js';

/** A before-hook threw: 400 HOOK_REJECTED, with the hook's message only for user-facing errors. */
export function hookRejected(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const userFacing = typeof err === 'object' && err !== null && (err as { userFacing?: unknown }).userFacing === true;
  return new ApiError('HOOK_REJECTED', userFacing ? (err as Error).message : undefined, { cause: err });
}

/** After-hooks run after the commit: a failure is logged and never turns the answer into an error. */
export async function runAfterHook(rt: Runtime, name: string, fn: () => unknown): Promise<void> {
  try {
    await fn();
  } catch (err) {
    rt.log.error({ err, hook: name }, 'after-hook failed');
  }
}
