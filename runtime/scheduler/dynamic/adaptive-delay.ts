/**
 * Tunes the batcher's queue delay online so the p99 latency of requests stays under a target
 * while batches grow as large as that allows (our `dynamic_batching.target_latency_ms`).
 *
 * Control law (AIMD, once per window of `window` completed requests):
 * - p99 above the target → halve the delay (back off fast: latency is what the user asked for);
 * - p99 below `headroom` × target and the window's batches were not full → add `target / 20`
 *   (probe slowly for bigger batches);
 * - otherwise keep it.
 * The delay stays within [0, target / 2]: waiting longer than half the budget leaves too little
 * for the execution itself.
 */
export class AdaptiveDelay {
  readonly #targetMs: number;
  readonly #window: number;
  readonly #headroom: number;
  #delayMs: number;
  #latencies: number[] = [];
  #fullBatches = 0;
  #batches = 0;

  constructor(options: { targetMs: number; initialDelayMs: number; window?: number; headroom?: number }) {
    this.#targetMs = options.targetMs;
    this.#window = options.window ?? 128;
    this.#headroom = options.headroom ?? 0.8;
    this.#delayMs = Math.min(options.initialDelayMs, this.ceilingMs);
  }

  get delayMs(): number {
    return this.#delayMs;
  }

  get ceilingMs(): number {
    return this.#targetMs / 2;
  }

  /** Records one execution: its requests' latencies and whether it filled the batch. */
  observe(latenciesMs: readonly number[], full: boolean): void {
    this.#latencies.push(...latenciesMs);
    this.#batches++;
    if (full) this.#fullBatches++;
    if (this.#latencies.length < this.#window) return;
    const sorted = this.#latencies.sort((a, b) => a - b);
    const p99 = sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]!;
    if (p99 > this.#targetMs) {
      this.#delayMs /= 2;
    } else if (p99 < this.#headroom * this.#targetMs && this.#fullBatches < this.#batches) {
      this.#delayMs = Math.min(this.ceilingMs, this.#delayMs + this.#targetMs / 20);
    }
    this.#latencies = [];
    this.#fullBatches = 0;
    this.#batches = 0;
  }
}
