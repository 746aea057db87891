/**
 * How many processes `serve --workers <n|auto>` runs (docs/reference/cli.md): the flag, else
 * `WORKERS`, else `auto` for `serve` (one per available CPU) and 1 for `dev`.
 */
import { availableParallelism } from 'node:os';

export const MAX_WORKERS = 64;

/** A one-line problem with a `--workers`/`WORKERS` value, or undefined when it is fine. */
export function checkWorkers(value: string, source = '--workers'): string | undefined {
  if (value === 'auto') return undefined;
  if (!/^[0-9]{1,3}$/.test(value) || Number(value) < 1 || Number(value) > MAX_WORKERS) return `${source} must be auto or a whole number from 1 to ${MAX_WORKERS}, not "${value.slice(0, 32)}"`;
  return undefined;
}

/** The number of worker processes; throws the one-line problem for a bad value. */
export function workerCount(flagValue: string | undefined, envValue: string | undefined, dev: boolean): number {
  const [value, source] = flagValue !== undefined ? [flagValue, '--workers'] : envValue ? [envValue, 'WORKERS'] : [dev ? '1' : 'auto', ''];
  const problem = checkWorkers(value, source);
  if (problem) throw new Error(problem);
  return value === 'auto' ? Math.min(MAX_WORKERS, availableParallelism()) : Number(value);
}
