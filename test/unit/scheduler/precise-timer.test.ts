import { describe, expect, it } from "vitest";
import { PreciseTimer, planWait } from "../../../runtime/scheduler/mod.ts";
import { FakeClock } from "../../support/fake-clock.ts";

describe("planWait", () => {
  it("sleeps on a timer for the bulk of a long wait, stopping short by the lateness", () => {
    expect(planWait(10, 2)).toEqual({ kind: "timer", ms: 10 - 2 - 0.1 });
  });

  it("polls a tail shorter than a timer can express", () => {
    expect(planWait(0.5, 2)).toEqual({ kind: "poll" });
    expect(planWait(2.5, 2)).toEqual({ kind: "poll" });
  });

  it("fires when due", () => {
    expect(planWait(0, 2)).toEqual({ kind: "fire" });
    expect(planWait(-1, 2)).toEqual({ kind: "fire" });
  });
});

describe("PreciseTimer", () => {
  it("`set()` closes a 0.5 ms window within one poll step although timers fire 1 ms late", () => {
    const clock = new FakeClock({ timerLatenessMs: 1, pollStepMs: 0.01 });
    const timer = new PreciseTimer(clock);
    let firedAt: number | undefined;
    timer.set(0.5, () => (firedAt = clock.now()));
    clock.advance(2);
    expect(firedAt).toBeGreaterThanOrEqual(0.5);
    expect(firedAt! - 0.5).toBeLessThanOrEqual(0.01 + 1e-9);
    expect(clock.timersSet).toBe(0); // all tail: no coarse timer for a sub-millisecond window
  });

  it("`set()` sleeps on a timer for a long wait and polls only its tail", () => {
    const clock = new FakeClock({ timerLatenessMs: 1, pollStepMs: 0.01 });
    const timer = new PreciseTimer(clock);
    let firedAt: number | undefined;
    timer.set(20, () => (firedAt = clock.now()));
    clock.advance(30);
    expect(clock.timersSet).toBe(1);
    expect(firedAt! - 20).toBeLessThanOrEqual(0.01 + 1e-9);
    // The coarse timer slept 17.9 ms and fired at 18.9; the tail polled ~1.1 ms, not 20.
    expect(clock.pollSteps).toBeLessThan(120);
  });

  it("learns the lateness timers show, so later sleeps stop shorter", () => {
    const clock = new FakeClock({ timerLatenessMs: 3, pollStepMs: 0.01 });
    const timer = new PreciseTimer(clock);
    let fired = 0;
    timer.set(20, () => fired++);
    clock.advance(30);
    expect(timer.latenessMs).toBeCloseTo(3, 6);
    timer.set(clock.now() + 20, () => fired++);
    const before = clock.pollSteps;
    clock.advance(30);
    expect(fired).toBe(2);
    expect(clock.pollSteps - before).toBeLessThan(20); // slept 16.9 ms, fired at 19.9: a short tail
  });

  it("`clear()` cancels a pending call, timer or poll, and leaves nothing pending", () => {
    const clock = new FakeClock({ pollStepMs: 0.01 });
    const timer = new PreciseTimer(clock);
    let fired = false;
    timer.set(0.5, () => (fired = true));
    clock.advance(0.2);
    timer.clear();
    clock.advance(5);
    expect(fired).toBe(false);
    expect(clock.pendingTimers()).toBe(0);
  });

  it("falls back to one plain timer on a clock that cannot poll", () => {
    const clock = new FakeClock();
    const timer = new PreciseTimer(clock);
    let firedAt: number | undefined;
    timer.set(0.5, () => (firedAt = clock.now()));
    clock.advance(1);
    expect(firedAt).toBe(0.5);
    expect(clock.timersSet).toBe(1);
  });

  it("`set()` with `coarse` sleeps on one timer and never polls, firing at the deadline or after it, and learns how late", () => {
    const clock = new FakeClock({ timerLatenessMs: 1, pollStepMs: 0.01 });
    const timer = new PreciseTimer(clock);
    let firedAt: number | undefined;
    timer.set(0.5, () => (firedAt = clock.now()), { coarse: true });
    clock.advance(3);
    expect(firedAt).toBe(1.5);
    expect(clock.pollSteps).toBe(0);
    expect(clock.timersSet).toBe(1);
    expect(timer.latenessMs).toBeGreaterThanOrEqual(1);
  });
});
