/**
 * A small bounded LRU on a Map (insertion order = recency order): a hit re-inserts the key, a
 * full cache drops its oldest entry. Memory stays bounded whatever the traffic.
 */
export class Lru<K, V> {
  #map = new Map<K, V>();
  #max: number;

  constructor(max: number) {
    if (!Number.isSafeInteger(max) || max < 0) throw new Error('Lru: max must be a whole number >= 0');
    this.#max = max;
  }

  get size(): number {
    return this.#map.size;
  }

  get(key: K): V | undefined {
    const v = this.#map.get(key);
    if (v !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, v);
    }
    return v;
  }

  set(key: K, value: V): void {
    if (this.#max === 0) return;
    this.#map.delete(key);
    if (this.#map.size >= this.#max) this.#map.delete(this.#map.keys().next().value as K);
    this.#map.set(key, value);
  }

  delete(key: K): void {
    this.#map.delete(key);
  }

  clear(): void {
    this.#map.clear();
  }
}
