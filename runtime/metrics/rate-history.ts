/**
 * The last minutes of a few cumulative figures per key (a function version's request counts,
 * histograms…), sampled on a timer: what a rate over "the last N seconds" is computed from, for a
 * reader that arrives at any moment (the dashboard's snapshot, a plot). Memory is bounded by
 * `spanMs ÷ the sampling interval` entries per key; a key not sampled for `spanMs` is dropped.
 */
export class RateHistory<T> {
  readonly spanMs: number;
  readonly #rings = new Map<string, { at: number; value: T }[]>();

  constructor(spanMs: number) {
    this.spanMs = spanMs;
  }

  /** Keeps `value` as `key`'s sample at `at` (clock ms, non-decreasing), forgetting what is older than the span. */
  record(key: string, at: number, value: T): void {
    let ring = this.#rings.get(key);
    if (!ring) this.#rings.set(key, (ring = []));
    ring.push({ at, value });
    while (ring.length > 1 && ring[0]!.at < at - this.spanMs) ring.shift();
  }

  /** Drops every key whose newest sample is older than the span (functions that went away). */
  prune(now: number): void {
    for (const [key, ring] of this.#rings) if (ring.at(-1)!.at < now - this.spanMs) this.#rings.delete(key);
  }

  /** `key`'s newest sample taken at or before `at`, else its oldest (the history is shorter than asked); undefined when none. */
  at(key: string, at: number): { at: number; value: T } | undefined {
    const ring = this.#rings.get(key);
    if (!ring?.length) return undefined;
    for (let i = ring.length - 1; i >= 0; i--) if (ring[i]!.at <= at) return ring[i];
    return ring[0];
  }

  /** `key`'s samples, oldest first (a copy): what a plot of the last minutes is drawn from. */
  series(key: string): { at: number; value: T }[] {
    return [...(this.#rings.get(key) ?? [])];
  }

  /** Samples held (all keys), for tests and for bounding memory. */
  get size(): number {
    let n = 0;
    for (const ring of this.#rings.values()) n += ring.length;
    return n;
  }
}
