import { describe, expect, it } from "vitest";
import { InlineGate } from "../../../runtime/backends/onnxruntime-node-backend.ts";
import { FakeClock } from "../../support/fake-clock.ts";

/** A fake clock whose `soon` queues the callback until the test lets the event loop "turn". */
function loop() {
  const clock = new FakeClock();
  const pending: (() => void)[] = [];
  const soon = (fn: () => void) => void pending.push(fn);
  const turn = () => pending.splice(0).forEach((fn) => fn());
  return { clock: Object.assign(clock, { soon }), pending, turn };
}

/** An inline computation that takes `ms` on the fake clock. */
const compute = (clock: FakeClock, ms: number) => async () => {
  clock.advance(ms);
  return ms;
};

describe("InlineGate", () => {
  it("`run()` lets runs through without yielding while the budget lasts", async () => {
    const { clock } = loop();
    const gate = new InlineGate(clock, { budgetMs: 1 });
    for (let i = 0; i < 9; i++) await gate.run(compute(clock, 0.1));
    expect(gate.yields).toBe(0);
  });

  it("`run()` yields one event-loop turn before a run once the runs since the last yield used the budget", async () => {
    const { clock, pending, turn } = loop();
    const gate = new InlineGate(clock, { budgetMs: 1 });
    for (let i = 0; i < 4; i++) await gate.run(compute(clock, 0.3)); // 1.2 ms used
    let ran = false;
    const next = gate.run(async () => (ran = true));
    await Promise.resolve();
    expect(gate.yields).toBe(1);
    expect(pending).toHaveLength(1);
    expect(ran).toBe(false); // waits for the turn: I/O goes first
    turn();
    await next;
    expect(ran).toBe(true);
    // The budget starts over after the yield.
    for (let i = 0; i < 3; i++) await gate.run(compute(clock, 0.3));
    expect(gate.yields).toBe(1);
  });

  it("bounds a back-to-back stream of inline runs to one yield per budget of compute", async () => {
    const { clock, turn } = loop();
    const gate = new InlineGate(clock, { budgetMs: 1 });
    // A batcher that dispatches the next batch as soon as the last one resolves.
    const stream = (async () => {
      for (let i = 0; i < 100; i++) await gate.run(compute(clock, 0.25));
    })();
    let turns = 0;
    let done = false;
    void stream.then(() => (done = true));
    while (!done) {
      for (let i = 0; i < 20; i++) await Promise.resolve();
      turn();
      turns++;
    }
    expect(gate.yields).toBe(24); // 100 runs × 0.25 ms = 25 ms: one yield after every 4 runs
    expect(turns).toBeGreaterThanOrEqual(24);
  });

  it("`run()` shares one yield among runs that wait at the same time, and without `soon` falls back to a 0 ms timer", async () => {
    const clock = new FakeClock();
    const gate = new InlineGate(clock, { budgetMs: 1 });
    await gate.run(compute(clock, 2));
    const waiting = [gate.run(async () => 1), gate.run(async () => 2)];
    await Promise.resolve();
    expect(gate.yields).toBe(1);
    expect(clock.pendingTimers()).toBe(1);
    clock.advance(0);
    expect(await Promise.all(waiting)).toEqual([1, 2]);
  });

  it("`run()` counts a run that throws and passes the error on", async () => {
    const { clock, turn } = loop();
    const gate = new InlineGate(clock, { budgetMs: 1 });
    const failing = gate.run(async () => {
      clock.advance(5);
      throw new Error("refused");
    });
    await expect(failing).rejects.toThrow("refused");
    const next = gate.run(async () => "ok");
    await Promise.resolve();
    expect(gate.yields).toBe(1);
    turn();
    expect(await next).toBe("ok");
  });

  describe("with `deferred` (an engine that computes each run on a later macrotask, as onnxruntime-node does)", () => {
    /** A run that computes `ms` on the fake clock only once the test turns the loop, as `setImmediate` would. */
    const later = (clock: FakeClock, pending: (() => void)[], ms: number) => () =>
      new Promise<number>((resolve) => {
        pending.push(() => {
          clock.advance(ms);
          resolve(ms);
        });
      });

    it("never yields before a run issued while no other is pending: it computes on a turn of its own", async () => {
      const { clock, pending, turn } = loop();
      const gate = new InlineGate(clock, { budgetMs: 1, deferred: true });
      // A batcher that dispatches the next batch as soon as the last one resolves, 3 ms a batch.
      for (let i = 0; i < 10; i++) {
        const run = gate.run(later(clock, pending, 3));
        await Promise.resolve();
        turn();
        await run;
      }
      expect(gate.yields).toBe(0);
    });

    it("counts runs issued while another is pending (they can share a turn) and yields once they spent the budget", async () => {
      const { clock, pending, turn } = loop();
      const gate = new InlineGate(clock, { budgetMs: 1, deferred: true });
      const first = gate.run(later(clock, pending, 2));
      const second = gate.run(later(clock, pending, 0.5)); // issued while the first is pending
      await Promise.resolve();
      expect(gate.yields).toBe(0); // nothing had run yet
      pending.shift()!(); // the first computes, 2 ms
      await first;
      const third = gate.run(later(clock, pending, 0.5)); // the second is still pending: 2 ms spent
      await Promise.resolve();
      expect(gate.yields).toBe(1);
      turn(); // the second computes; the yield lets the third go on, which then waits for its turn
      expect(await second).toBe(0.5);
      await Promise.resolve();
      turn();
      expect(await third).toBe(0.5);
    });
  });
});
