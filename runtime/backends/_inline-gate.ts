import { nextTurn } from "../core/mod.ts";
import type { Clock } from "../core/mod.ts";

/** Inline compute allowed between two event-loop yields (ms), unless a backend says otherwise. */
export const INLINE_BUDGET_MS = 1;

/**
 * Keeps sessions that compute on the event loop (`execution_thread: main`) from starving HTTP.
 * Policy: inline runs add up their wall time; once the runs since the last yield used
 * `budgetMs`, the next run first yields one macrotask (`clock.soon`, a MessageChannel ping:
 * ~5–50 µs under Node, Bun and Deno, where `setTimeout(0)` costs 1–2 ms), so pending I/O is
 * served before it computes. A single run is never cut short: placement keeps inline only models
 * whose largest batch is cheap. One gate per backend, since every inline session shares the loop.
 *
 * `deferred`: the engine itself computes each run on a later macrotask (onnxruntime-node's
 * `run` does, through `setImmediate`; test/unit/backends/ort-session.test.ts checks it), so a run
 * issued while no other inline run is pending computes after pending I/O, on a turn of its own:
 * the budget starts over and it never waits. Only runs issued while another is pending can share
 * a turn, and only they are counted against the budget. Counting every run's wall time instead
 * (which includes its wait for that turn, i.e. the turn's HTTP work) spent the budget in two or
 * three runs under load, and each needless yield cost a MessageChannel and a turn of latency.
 */
export class InlineGate {
  readonly #clock: Pick<Clock, "now" | "setTimeout" | "soon">;
  readonly #budgetMs: number;
  readonly #deferred: boolean;
  #usedMs = 0;
  #pending = 0;
  #turn?: Promise<void>;
  #yields = 0;

  constructor(clock: Pick<Clock, "now" | "setTimeout" | "soon">, options: { budgetMs?: number; deferred?: boolean } = {}) {
    this.#clock = clock;
    this.#budgetMs = options.budgetMs ?? INLINE_BUDGET_MS;
    this.#deferred = options.deferred ?? false;
  }

  /** Runs one inline computation, after a yield when the budget since the last one is spent. */
  async run<T>(compute: () => Promise<T>): Promise<T> {
    if (this.#deferred && this.#pending === 0 && this.#turn === undefined) this.#usedMs = 0;
    else if (this.#usedMs >= this.#budgetMs) await this.#yield();
    this.#pending++;
    const start = this.#clock.now();
    try {
      return await compute();
    } finally {
      this.#pending--;
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
      nextTurn(this.#clock, resume);
    });
    return this.#turn;
  }
}
