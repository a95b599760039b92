import type { Clock } from "../../core/mod.ts";

/** How to wait for a deadline `remainingMs` away, given how late timers have been firing. */
export type WaitStep = { kind: "timer"; ms: number } | { kind: "poll" } | { kind: "fire" };

/** Timers below this many milliseconds round up to it (Node, Bun) or later (Deno): poll instead. */
const TIMER_FLOOR_MS = 1;
/** Room left between a coarse timer's expected firing and the deadline, for its jitter. */
const GUARD_MS = 0.1;

/**
 * The wait policy as data: sleep on a timer for the bulk of the wait, stopping short of the
 * deadline by the lateness timers have shown, then poll the tail; fire when due. A tail shorter
 * than a timer can express is polled whole.
 */
export function planWait(remainingMs: number, latenessMs: number): WaitStep {
  if (remainingMs <= 0) return { kind: "fire" };
  const sleep = remainingMs - latenessMs - GUARD_MS;
  return sleep >= TIMER_FLOOR_MS ? { kind: "timer", ms: sleep } : { kind: "poll" };
}

/**
 * A one-shot timer that fires within tens of microseconds of its deadline where the clock can
 * poll (`Clock.soon`), so a 500 µs batch window lasts 500 µs, not the 1.1–2.1 ms timers give.
 * Polling happens only in the tail of a pending wait: an idle batcher holds no timer at all.
 * Lateness is learned online from the coarse timers it sets (a decaying maximum), starting at
 * 2 ms, which covers every runtime measured in bench/studies/batch-window.ts.
 */
export class PreciseTimer {
  readonly #clock: Clock;
  #latenessMs = 2;
  #handle: unknown;
  /** Bumped by every set/clear so a stale poll step or timer does nothing. */
  #generation = 0;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Timer lateness assumed now, in milliseconds. */
  get latenessMs(): number {
    return this.#latenessMs;
  }

  /**
   * Calls `fn` once at clock time `atMs` (replacing any pending call). `coarse` (and any clock
   * without `soon`): on the clock's timer alone, at `atMs` or up to `latenessMs` after it, never polling: for waits whose end is an
   * estimate that an arrival usually ends first (the adaptive law's), where polling would spend
   * the event loop that reads those arrivals.
   */
  set(atMs: number, fn: () => void, options: { coarse?: boolean } = {}): void {
    this.clear();
    const generation = this.#generation;
    const clock = this.#clock;
    if (options.coarse || !clock.soon) {
      const now = clock.now();
      const expected = Math.max(atMs, now);
      this.#handle = clock.setTimeout(() => {
        this.#handle = undefined;
        if (generation !== this.#generation) return;
        this.#learn(clock.now() - expected);
        fn();
      }, expected - now);
      return;
    }
    const soon = clock.soon.bind(clock);
    const step = () => {
      if (generation !== this.#generation) return;
      const plan = planWait(atMs - clock.now(), this.#latenessMs);
      if (plan.kind === "fire") return void ((this.#generation += 1), fn());
      if (plan.kind === "poll") return soon(step);
      const expected = clock.now() + plan.ms;
      this.#handle = clock.setTimeout(() => {
        this.#handle = undefined;
        this.#learn(clock.now() - expected);
        step();
      }, plan.ms);
    };
    step();
  }

  clear(): void {
    this.#generation++;
    if (this.#handle === undefined) return;
    this.#clock.clearTimeout(this.#handle);
    this.#handle = undefined;
  }

  /** A decaying maximum: one late firing raises it at once, punctual ones lower it slowly. */
  #learn(lateMs: number): void {
    this.#latenessMs = Math.max(lateMs, this.#latenessMs * 0.95, 0.25);
  }
}
