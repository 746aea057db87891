/** Polling for effects that land after an answer (queued hook work, stream payloads). */
export const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `read` until `done` holds, then answers the last value; fails with `what` after the timeout. */
export async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, what: string, timeoutMs = 60_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(v)}`);
    await pause(everyMs);
  }
}
