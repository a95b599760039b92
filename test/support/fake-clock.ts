import type { Clock } from "../../runtime/mod.ts";

/** A clock that only moves when a test calls `advance`; timers fire in deadline order. */
export class FakeClock implements Clock {
  #now = 0;
  #timers = new Map<number, { at: number; fn: () => void }>();
  #next = 1;

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.#next++;
    this.#timers.set(id, { at: this.#now + Math.max(0, ms), fn });
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
