/**
 * Rate-limit windows (docs/reference/rate-limits.md): `window` is a number of milliseconds or a string such as "500ms",
 * "10s", "1m", "1h", "1d". Parsed once when the project is compiled, so a typo fails at start
 * with a message naming the bad value instead of silently limiting wrongly at request time.
 */

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Whole amount and unit; no spaces, signs, decimals or exponents (they hide typos like "1.5.0s"). */
const WINDOW_RE = /^(\d{1,15})(ms|s|m|h|d)$/;

/**
 * Milliseconds of a policy window. Throws an Error naming `where` (e.g. `table "tasks" policy
 * "list"`) for anything that is not a positive whole number of milliseconds.
 */
export function parseWindow(window: unknown, where = 'rate-limit policy'): number {
  let ms: number;
  if (typeof window === 'number') {
    ms = window;
  } else if (typeof window === 'string') {
    const m = WINDOW_RE.exec(window);
    if (m === null) {
      throw new Error(`${where}: window ${JSON.stringify(window)} is not a duration; use milliseconds or a string like "500ms", "10s", "1m", "1h", "1d"`);
    }
    ms = Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  } else {
    throw new Error(`${where}: window must be milliseconds or a string like "10s", got ${window === null ? 'null' : typeof window}`);
  }
  // A zero or fractional window has no sliding meaning; an unsafe integer loses precision in
  // timestamp arithmetic.
  if (!Number.isSafeInteger(ms) || ms <= 0) {
    throw new Error(`${where}: window must be a positive whole number of milliseconds, got ${JSON.stringify(window)}`);
  }
  return ms;
}
