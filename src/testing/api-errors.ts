/**
 * How unit tests catch the one error type of the catalog (`src/core/errors.ts`, docs/reference/conventions.md): each
 * helper answers the ApiError a piece of work failed with, and rethrows anything else, so a test
 * that expects `INVALID_TOKEN` can never pass on a TypeError. Nothing here is used outside tests.
 */
import { ApiError } from '../core/errors.js';

function apiErrorOr(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  throw err;
}

/** The ApiError `fn` throws; fails when it returns. */
export function thrownApiError(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    return apiErrorOr(err);
  }
  throw new Error('expected an ApiError to be thrown');
}

/** The ApiError `work` (a promise, or any value) rejects with; undefined when it resolves. */
async function failureOf(work: unknown): Promise<ApiError | undefined> {
  try {
    await work;
    return undefined;
  } catch (err) {
    return apiErrorOr(err);
  }
}

/** The ApiError `work` rejects with; fails when it resolves. */
export async function rejectedApiError(work: unknown): Promise<ApiError> {
  const err = await failureOf(work);
  if (!err) throw new Error('expected an ApiError rejection');
  return err;
}

/** `'OK'` when `work` resolves, else `'<status> <code>'` of its ApiError: one string to compare. */
export async function outcome(work: unknown): Promise<string> {
  const err = await failureOf(work);
  return err ? `${err.status} ${err.code}` : 'OK';
}
