import type { Clock } from "../core/mod.ts";

/** Inline compute allowed between two event-loop yields (ms), unless a backend says otherwise. */
export const INLINE_BUDGET_MS = 1;

/**
 * Keeps sessions that compute on the event loop (`execution_thread: main`) from starving HTTP.
 * onnxruntime-node computes synchronously, so a stream of inline runs (a batcher dispatching the
 * next batch as the last one resolves) could otherwise hold the loop for as long as the queue
 * lasts. Policy: inline runs add up their wall time; once the runs since the last yield used
 * `budgetMs`, the next run first yields one macrotask (`clock.soon`, a MessageChannel ping:
 * ~5–50 µs under Node, Bun and Deno, where `setTimeout(0)` costs 1–2 ms), so pending I/O is
 * served before it computes. A single run is never cut short: placement keeps inline only models
 * whose largest batch is cheap. One gate per backend, since every inline session shares the loop.
 */
export class InlineGate {
  readonly #clock: Pick<Clock, "now" | "setTimeout" | "soon">;
  readonly #budgetMs: number;
  #usedMs = 0;
  #turn?: Promise<void>;
  #yields = 0;

  constructor(clock: Pick<Clock, "now" | "setTimeout" | "soon">, options: { budgetMs?: number } = {}) {
    this.#clock = clock;
    this.#budgetMs = options.budgetMs ?? INLINE_BUDGET_MS;
  }

  /** Runs one inline computation, after a yield when the budget since the last one is spent. */
  async run<T>(compute: () => Promise<T>): Promise<T> {
    if (this.#usedMs >= this.#budgetMs) await this.#yield();
    const start = this.#clock.now();
    try {
      return await compute();
    } finally {
      this.#usedMs += this.#clock.now() - start;
    }
  }

  /** How many times the gate has yielded (for tests and diagnostics). */
  get yields(): number {
    return this.#yields;
  }

  // Runs waiting at the same time share one yield: one turn of I/O, then they go on in order.
  #yield(): Promise<void> {
    this.#turn ??= new Promise<void>((resolve) => {
      this.#yields++;
      const resume = () => {
        this.#usedMs = 0;
        this.#turn = undefined;
        resolve();
      };
      if (this.#clock.soon) this.#clock.soon(resume);
      else this.#clock.setTimeout(resume, 0);
    });
    return this.#turn;
  }
}
