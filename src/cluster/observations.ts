/**
 * Answered requests on their way from a worker to the primary (docs/scaling.md), which counts each
 * once in metrics, the request log and the history. A busy worker sends thousands a second, so the
 * wire form is columns of small integers: each distinct method, route and client address once per
 * batch with an index per request, the latency in hundredths of a millisecond (all the dashboard
 * and the latency percentiles show), the time as an offset from the batch's first. As one JSON
 * array per request, with the latency a fraction and the clock a 13-digit number, serializing and
 * parsing them cost the two processes ~12k instructions per get, ~8% of what a get costs in worker
 * mode (bench/get-instructions.ts w2, docs/lifecycle.md).
 */
import type { Observation, ObservationBatch } from './ipc-protocol.js';

/** Fields per request in `rows` (ipc-protocol.ts ObservationBatch). */
const FIELDS = 6;

/** A worker's requests since its last flush, encoded as they are observed. */
export class ObservationEncoder {
  #names: string[] = [];
  #index = new Map<string, number>();
  #rows: number[] = [];
  #ids: string[] = [];
  #base = 0;

  get size(): number {
    return this.#ids.length;
  }

  add(o: Observation): void {
    if (this.#ids.length === 0) this.#base = o[6];
    this.#rows.push(this.#name(o[0]), this.#name(o[1]), o[2], Math.round(o[3] * 100), this.#name(o[5]), o[6] - this.#base);
    this.#ids.push(o[4]);
  }

  /** The batch so far; the encoder starts empty again. */
  take(): ObservationBatch {
    const batch = { names: this.#names, base: this.#base, rows: this.#rows, ids: this.#ids };
    this.#names = [];
    this.#index = new Map();
    this.#rows = [];
    this.#ids = [];
    return batch;
  }

  #name(s: string): number {
    let i = this.#index.get(s);
    if (i === undefined) {
      i = this.#names.push(s) - 1;
      this.#index.set(s, i);
    }
    return i;
  }
}

/** The primary's side: each request of a batch, in the order the worker answered them (no object per request). */
export function eachObservation(b: ObservationBatch, each: (...o: Observation) => void): void {
  const { names, base, rows, ids } = b;
  for (let i = 0, r = 0; i < ids.length; i++, r += FIELDS) {
    each(names[rows[r]!]!, names[rows[r + 1]!]!, rows[r + 2]!, rows[r + 3]! / 100, ids[i]!, names[rows[r + 4]!]!, base + rows[r + 5]!);
  }
}
