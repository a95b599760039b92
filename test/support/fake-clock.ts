import type { Clock } from "../../runtime/mod.ts";

/**
 * A clock that only moves when a test calls `advance`; timers fire in deadline order. Options
 * model a real event loop for the precise-timer logic: `timerLatenessMs` makes every setTimeout
 * fire that much late, and `pollStepMs` gives the clock a `soon` whose step takes that long (one
 * event-loop turn). Without `pollStepMs` the clock has no `soon`, as a plain timer source.
 */
export class FakeClock implements Clock {
  #now = 0;
  #timers = new Map<number, { at: number; fn: () => void }>();
  #next = 1;
  readonly #lateness: number;
  /** setTimeout calls so far (the precise timer's coarse sleeps), and soon() steps. */
  timersSet = 0;
  pollSteps = 0;
  soon?: (fn: () => void) => void;

  constructor(options: { timerLatenessMs?: number; pollStepMs?: number } = {}) {
    this.#lateness = options.timerLatenessMs ?? 0;
    const step = options.pollStepMs;
    if (step !== undefined) {
      this.soon = (fn) => {
        this.pollSteps++;
        this.#timers.set(this.#next++, { at: this.#now + step, fn });
      };
    }
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.#next++;
    this.timersSet++;
    this.#timers.set(id, { at: this.#now + Math.max(0, ms) + this.#lateness, fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number);
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way. */
  advance(ms: number): void {
    const end = this.#now + ms;
    for (;;) {
      const due = [...this.#timers.entries()].filter(([, t]) => t.at <= end).sort(([, a], [, b]) => a.at - b.at)[0];
      if (!due) break;
      this.#timers.delete(due[0]);
      this.#now = due[1].at;
      due[1].fn();
    }
    this.#now = end;
  }

  pendingTimers(): number {
    return this.#timers.size;
  }
}
