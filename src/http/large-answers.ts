/**
 * Large answers and clients that do not read them (issue #11: 20 clients that never read a list
 * of 8 MB rows held 200+ MB, and nothing ever released it: a response that is never drained
 * never finishes). Two bounds, for answers over 256 KiB only, so small answers pay nothing:
 *
 * - a stall timeout: a large answer whose socket makes no write progress is cut. Node's socket
 *   timeout does the watching: at each expiry (10 s) it checks whether the kernel took more of
 *   the pending write and, if so, waits again, so a slow but reading client is never cut and a
 *   stalled one is cut 10–20 s after it stopped reading;
 * - a server-wide budget of bytes held by large answers still being written (64 MiB; an answer
 *   is held about twice, as its string and as the socket's buffer): past it a new large answer
 *   is 503 UNAVAILABLE (Retry-After) instead of more memory.
 */
import type { ServerResponse } from 'node:http';
import { ApiError } from '../core/errors.js';

const limits = { largeBytes: 256 * 1024, stallMs: 10_000, inFlightBytes: 64 * 1024 * 1024 };
let inFlight = 0;

/** Changes the bounds (tests). */
export function setLargeAnswerLimits(l: Partial<typeof limits>): void {
  Object.assign(limits, l);
}

/** Bytes of large answers not yet fully written (tests, metrics). */
export function largeAnswersInFlight(): number {
  return inFlight;
}

/** Call before writing an answer of `bytes`; throws 503 when the budget is spent. */
export function admitAnswer(res: ServerResponse, bytes: number): void {
  if (bytes < limits.largeBytes) return;
  if (inFlight + bytes > limits.inFlightBytes) throw new ApiError('UNAVAILABLE', 'Too many large answers are being sent; retry shortly', { headers: { 'retry-after': '5' } });
  inFlight += bytes;
  res.once('close', () => {
    inFlight -= bytes;
  });
  res.setTimeout(limits.stallMs, () => res.destroy());
}
