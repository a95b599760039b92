import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { DynamicBatcher } from "../../runtime/scheduler/mod.ts";
import type { ExecutionTiming, RunOptions } from "../../runtime/scheduler/mod.ts";
import type { Tensor } from "../../runtime/mod.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { FakeInstance, fakeRequest, settle } from "../support/fake-instance.ts";
import { instanceSchedulerContract, schedulerBasicsContract, schedulerContract } from "./scheduler-contract.ts";

schedulerContract("DynamicBatcher", (setup) => new DynamicBatcher(setup));
instanceSchedulerContract("DynamicBatcher", (setup) => new DynamicBatcher(setup));
schedulerBasicsContract("DynamicBatcher", (instance) => new DynamicBatcher({ instances: [instance], maxBatchSize: 8, clock: new FakeClock() }));

describe("DynamicBatcher: which outputs an execution fetches", () => {
  it("`enqueue()` asks the instance for the union of its requests' outputs, and for all of them when one request needs all", async () => {
    const instance = new FakeInstance({ manual: true });
    const batcher = new DynamicBatcher({ instances: [instance], maxBatchSize: 8, clock: new FakeClock() });
    const first = batcher.enqueue(fakeRequest(1, { outputs: ["y"] }));
    const subsets = [batcher.enqueue(fakeRequest(2, { outputs: ["y"] })), batcher.enqueue(fakeRequest(3, { outputs: ["z", "y"] }))];
    instance.finish();
    await first;
    await settle();
    const withAll = [batcher.enqueue(fakeRequest(4, { outputs: ["z"] })), batcher.enqueue(fakeRequest(5))];
    instance.finish();
    await Promise.all(subsets);
    await settle();
    instance.finish();
    await Promise.all(withAll);
    expect(instance.executions).toEqual([[1], [2, 3], [4, 5]]);
    expect(instance.fetched).toEqual([["y"], ["y", "z"], undefined]);
  });
});

describe("DynamicBatcher: whether to wait at all", () => {
  it("`enqueue()` stops waiting out the delay for a lone request once waits keep gaining nothing (closed loop, c=1)", async () => {
    const clock = new FakeClock();
    const instance = new FakeInstance();
    const batcher = new DynamicBatcher({ instances: [instance], maxBatchSize: 8, maxQueueDelayMs: 0.5, clock });
    const waits: number[] = [];
    for (let i = 0; i < 16; i++) {
      const start = clock.now();
      const done = batcher.enqueue(fakeRequest(i)).then(() => waits.push(clock.now() - start));
      await settle();
      clock.advance(0.5);
      await done;
    }
    // The first waits pay the delay (the config asked for it); then a lone request leaves at once,
    // except every eighth, which probes whether traffic changed.
    expect(waits.slice(0, 3)).toEqual([0.5, 0.5, 0.5]);
    expect(waits.slice(8).filter((w) => w === 0).length).toBeGreaterThanOrEqual(7);
  });

  it("`enqueue()` keeps waiting while waits gain requests", async () => {
    const clock = new FakeClock();
    const instance = new FakeInstance();
    const batcher = new DynamicBatcher({ instances: [instance], maxBatchSize: 8, maxQueueDelayMs: 0.5, clock });
    for (let i = 0; i < 10; i++) {
      const pending = [batcher.enqueue(fakeRequest(1))];
      await settle();
      clock.advance(0.2);
      pending.push(batcher.enqueue(fakeRequest(2)));
      await settle();
      clock.advance(0.3);
      await Promise.all(pending);
    }
    expect(instance.executions.every((e) => e.length === 2)).toBe(true);
  });

  it("`enqueue()` does not wait out the delay when no other request can arrive (`mayArrive`), and waits while one can", async () => {
    const clock = new FakeClock();
    const instance = new FakeInstance();
    let open = true;
    const batcher = new DynamicBatcher({ instances: [instance], maxBatchSize: 8, maxQueueDelayMs: 0.5, clock, arrivals: { mayArrive: () => open } });
    const waited = batcher.enqueue(fakeRequest(1));
    await settle();
    expect(instance.executions).toEqual([]);
    clock.advance(0.5);
    await waited;
    open = false;
    await batcher.enqueue(fakeRequest(2)); // no clock advance: it left at once
    expect(instance.executions).toEqual([[1], [2]]);
  });

  it("`enqueue()` sends a waiting batch at once when the request that arrives is the last that could", async () => {
    const clock = new FakeClock();
    const instance = new FakeInstance();
    let open = true;
    const batcher = new DynamicBatcher({ instances: [instance], maxBatchSize: 8, maxQueueDelayMs: 0.5, clock, arrivals: { mayArrive: () => open } });
    const first = batcher.enqueue(fakeRequest(1));
    await settle();
    clock.advance(0.2);
    open = false;
    await Promise.all([first, batcher.enqueue(fakeRequest(2))]);
    expect(instance.executions).toEqual([[1, 2]]);
    expect(clock.now()).toBe(0.2);
  });

  it("`enqueue()` with a latency target does not wait by the adaptive law when no other request can arrive", async () => {
    for (const arrivals of ["possible", "impossible"] as const) {
      const clock = new FakeClock();
      // Each execution takes 5 ms + 0.1 ms per row on the fake clock: a fixed cost that makes waiting pay.
      class TimedInstance extends FakeInstance {
        override run(feeds: Record<string, Tensor>, options?: RunOptions): Promise<Record<string, Tensor>> {
          const result = super.run(feeds, options);
          const rows = Object.values(feeds)[0]!.shape[0]!;
          return new Promise((resolve) => clock.setTimeout(() => resolve(result), 5 + 0.1 * rows));
        }
      }
      const instance = new TimedInstance();
      let open = true;
      const batcher = new DynamicBatcher({ instances: [instance], maxBatchSize: 8, targetLatencyMs: 50, clock, arrivals: { mayArrive: () => open } });
      const drive = async (pending: Promise<unknown>[]) => {
        let done = false;
        void Promise.all(pending).then(() => (done = true));
        while (!done) {
          await settle();
          clock.advance(0.05);
        }
      };
      // Groups of requests arriving together teach it the cost and a short gap between arrivals.
      for (const rows of [4, 2, 4, 3, 4, 2, 4, 3, 4, 4]) await drive(Array.from({ length: rows }, (_, i) => batcher.enqueue(fakeRequest(i))));
      expect(batcher.cost?.b).toBeGreaterThan(2);
      const before = instance.executions.length;
      const first = batcher.enqueue(fakeRequest(9));
      await settle();
      expect(instance.executions.length).toBe(before); // the law waits for company
      open = arrivals === "possible";
      const second = batcher.enqueue(fakeRequest(10));
      await settle();
      // Two rows do not yet pay for the fixed cost: the law keeps waiting, unless no third request can come.
      expect(instance.executions.length).toBe(arrivals === "possible" ? before : before + 1);
      await drive([first, second]);
      expect(instance.executions.at(-1)).toEqual([9, 10]);
    }
  });
});

describe("DynamicBatcher: a batch for an instance that computes on a later turn (`computeTurn`)", () => {
  /** An instance whose runs start on a turn the test opens (`openTurn()`), as onnxruntime-node's inline runs start on setImmediate. */
  class TurnInstance extends FakeInstance {
    readonly turns: (() => void)[] = [];
    computeTurn(fn: () => void): void {
      this.turns.push(fn);
    }
    openTurn(): void {
      for (const fn of this.turns.splice(0)) fn();
    }
  }

  it("`enqueue()` forms the batch on the instance's turn, so requests that arrive before it join", async () => {
    const instance = new TurnInstance();
    const batcher = new DynamicBatcher({ instances: [instance], maxBatchSize: 8, clock: new FakeClock(), arrivals: { mayArrive: () => true } });
    const first = batcher.enqueue(fakeRequest(1));
    const second = batcher.enqueue(fakeRequest(2));
    await settle();
    expect(instance.executions).toEqual([]); // no delay, yet nothing runs before the turn
    expect(instance.turns.length).toBe(1); // one turn asked for, not one per arrival
    const third = batcher.enqueue(fakeRequest(3));
    instance.openTurn();
    await Promise.all([first, second, third]);
    expect(instance.executions).toEqual([[1, 2, 3]]);
  });

  it("`enqueue()` sends at once, without the turn, a batch that is full or that no request can still reach", async () => {
    const instance = new TurnInstance();
    let open = true;
    const batcher = new DynamicBatcher({ instances: [instance], maxBatchSize: 2, clock: new FakeClock(), arrivals: { mayArrive: () => open } });
    await batcher.enqueue(fakeRequest(1, { rows: 2 })); // full
    open = false;
    await batcher.enqueue(fakeRequest(3)); // a lone client: nothing else can come
    expect(instance.executions).toEqual([[1, 1], [3]]);
    expect(instance.turns).toEqual([]);
  });

  it("`enqueue()` without `computeTurn` sends at once, as before", async () => {
    const instance = new FakeInstance();
    const batcher = new DynamicBatcher({ instances: [instance], maxBatchSize: 8, clock: new FakeClock(), arrivals: { mayArrive: () => true } });
    await batcher.enqueue(fakeRequest(1));
    expect(instance.executions).toEqual([[1]]);
  });

  it("`stop()` waits for a batch still to be formed on its turn, which then runs", async () => {
    const instance = new TurnInstance();
    const batcher = new DynamicBatcher({ instances: [instance], maxBatchSize: 8, clock: new FakeClock() });
    const pending = batcher.enqueue(fakeRequest(1));
    let stopped = false;
    void batcher.stop().then(() => (stopped = true));
    await settle();
    expect(stopped).toBe(false);
    instance.openTurn();
    await pending;
    await settle();
    expect(stopped).toBe(true);
    expect(instance.executions).toEqual([[1]]);
  });
});

describe("DynamicBatcher: after an execution, with its answers still on their way", () => {
  it("an instance that computes on a later turn decides on that turn, once the answers are out, rather than on `no_arrivals` now", async () => {
    class TurnInstance extends FakeInstance {
      readonly turns: (() => void)[] = [];
      computeTurn(fn: () => void): void {
        this.turns.push(fn);
      }
    }
    const instance = new TurnInstance({ manual: true });
    const clock = new FakeClock();
    // Two clients: one request running, the other's queued. Until the first is answered nothing can arrive.
    let answered = false;
    const batcher = new DynamicBatcher({ instances: [instance], maxBatchSize: 8, maxQueueDelayMs: 0.5, clock, arrivals: { mayArrive: () => answered } });
    const first = batcher.enqueue(fakeRequest(1));
    await settle();
    expect(instance.executions).toEqual([[1]]); // no_arrivals: it left at once
    const second = batcher.enqueue(fakeRequest(2));
    instance.finish();
    await first;
    answered = true; // the first client has its answer and may send again
    expect(instance.turns.length).toBe(1); // the queued request waits for the turn, not sent on a stale no_arrivals
    instance.turns.shift()!();
    expect(instance.executions).toEqual([[1]]); // on the turn, the first client may come back: it waits out the delay
    const third = batcher.enqueue(fakeRequest(3));
    clock.advance(0.5);
    instance.turns.shift()?.();
    await settle();
    instance.finish(true);
    await Promise.all([second, third]);
    expect(instance.executions).toEqual([[1], [2, 3]]);
  });
});

describe("DynamicBatcher with a latency target: what it sheds", () => {
  it("runs a request its own wait made late (its timer fired behind a busy loop) instead of shedding it", async () => {
    const fake = new FakeClock();
    let busyLoopMs = 0; // how late the next timers fire
    const clock = { now: () => fake.now(), setTimeout: (fn: () => void, ms: number) => fake.setTimeout(fn, ms + busyLoopMs), clearTimeout: (h: unknown) => fake.clearTimeout(h) };
    // Each execution takes 1 ms + 0.1 ms per row on the fake clock.
    class TimedInstance extends FakeInstance {
      override run(feeds: Record<string, Tensor>, options?: RunOptions): Promise<Record<string, Tensor>> {
        const result = super.run(feeds, options);
        const rows = Object.values(feeds)[0]!.shape[0]!;
        return new Promise((resolve) => fake.setTimeout(() => resolve(result), 1 + 0.1 * rows));
      }
    }
    const batcher = new DynamicBatcher({ instances: [new TimedInstance()], maxBatchSize: 8, targetLatencyMs: 10, clock, arrivals: { mayArrive: () => true, expectedAt: () => fake.now() + 0.5 } });
    const drive = async (pending: Promise<unknown>) => {
      let done = false;
      void pending.then(() => (done = true), () => (done = true));
      while (!done) {
        await settle();
        fake.advance(0.05);
      }
      return pending;
    };
    // The cost, learned from batches of different sizes; each waits ~1.5 ms for a client that is expected but never comes.
    for (const rows of [1, 3, 2]) await drive(batcher.enqueue(fakeRequest(rows, { rows })));
    busyLoopMs = 15;
    const start = fake.now();
    await expect(drive(batcher.enqueue(fakeRequest(7)))).resolves.toEqual({ y: expect.anything() });
    expect(fake.now() - start).toBeGreaterThan(10); // answered late, not shed
  });
});

describe("DynamicBatcher: why each batch left (`ExecutionTiming.reason`)", () => {
  const reasonsOf = (timings: ExecutionTiming[]) => timings.map((t) => t.reason);

  it("reports full, preferred, blocked, at_once and retry where those decide", async () => {
    const timings: ExecutionTiming[] = [];
    const observer = { dequeued: () => {}, executed: (t: ExecutionTiming) => void timings.push(t) };
    const clock = new FakeClock();
    const held = new FakeInstance({ manual: true });
    const batcher = new DynamicBatcher({ instances: [held], maxBatchSize: 4, preferredBatchSizes: [2], maxQueueDelayMs: 5, clock, observer });
    // While a full batch runs, the rest queue: a request whose neighbour has another shape, that one, then a preferred pair.
    const full = batcher.enqueue(fakeRequest(1, { rows: 4 }));
    const queued = [batcher.enqueue(fakeRequest(2)), batcher.enqueue(fakeRequest(4, { shapeKey: "x:2" })), batcher.enqueue(fakeRequest(3)), batcher.enqueue(fakeRequest(5))];
    for (let i = 0; i < 4; i++) {
      await settle();
      held.finish();
    }
    await Promise.all([full, ...queued]);
    expect(reasonsOf(timings)).toEqual(["full", "blocked", "blocked", "preferred"]);

    timings.length = 0;
    // No delay: a batch leaves at once; one that fails because of one request is re-run request by request.
    const failing = new FakeInstance({ manual: true, failOn: 6 });
    const batcher2 = new DynamicBatcher({ instances: [failing], maxBatchSize: 4, clock, observer });
    const first = batcher2.enqueue(fakeRequest(5));
    const both = Promise.allSettled([batcher2.enqueue(fakeRequest(6)), batcher2.enqueue(fakeRequest(7))]);
    for (let i = 0; i < 3; i++) {
      await settle();
      failing.finish(true);
    }
    await first;
    expect((await both).map((r) => r.status)).toEqual(["rejected", "fulfilled"]);
    expect(failing.executions).toEqual([[5], [6, 7], [6], [7]]);
    expect(reasonsOf(timings)).toEqual(["at_once", "retry"]); // failed executions ([6, 7], then [6]) report no timing
  });

  it("reports delay, no_arrivals and not_paying where the wait decides", async () => {
    const timings: ExecutionTiming[] = [];
    const clock = new FakeClock();
    let open = true;
    const batcher = new DynamicBatcher({ instances: [new FakeInstance()], maxBatchSize: 8, maxQueueDelayMs: 0.5, clock, arrivals: { mayArrive: () => open }, observer: { dequeued: () => {}, executed: (t) => void timings.push(t) } });
    for (let i = 0; i < 8; i++) {
      const done = batcher.enqueue(fakeRequest(i));
      await settle();
      clock.advance(0.5);
      await done;
    }
    open = false;
    await batcher.enqueue(fakeRequest(9));
    expect(reasonsOf(timings).slice(0, 3)).toEqual(["delay", "delay", "delay"]);
    expect(reasonsOf(timings)).toContain("not_paying"); // lone requests whose waits stopped paying
    expect(reasonsOf(timings).at(-1)).toBe("no_arrivals");
  });
});

describe("DynamicBatcher: what it reports of an execution", () => {
  /** Waits `turnMs` for its turn of the loop, then computes for `computeMs`, and says so through `computed`. */
  class EventLoopInstance extends FakeInstance {
    readonly clock: FakeClock;
    readonly turnMs: number;
    readonly computeMs: number;
    constructor(clock: FakeClock, turnMs: number, computeMs: number) {
      super();
      this.clock = clock;
      this.turnMs = turnMs;
      this.computeMs = computeMs;
    }
    override run(feeds: Record<string, Tensor>, options?: RunOptions): Promise<Record<string, Tensor>> {
      const result = super.run(feeds, options);
      return new Promise((resolve) => this.clock.setTimeout(() => (options?.computed?.(this.computeMs), resolve(result)), this.turnMs + this.computeMs));
    }
  }

  it("`executed()` reports an event-loop run's own time as `inferMs` and its wait for the turn as `waitMs`, with or without a latency target", async () => {
    for (const targetLatencyMs of [undefined, 50]) {
      const clock = new FakeClock();
      const timings: ExecutionTiming[] = [];
      const observer = { dequeued: () => {}, executed: (t: ExecutionTiming) => void timings.push(t) };
      const batcher = new DynamicBatcher({ instances: [new EventLoopInstance(clock, 3, 0.5)], maxBatchSize: 8, targetLatencyMs, clock, observer });
      const done = batcher.enqueue(fakeRequest(1));
      for (let i = 0; i < 8; i++) {
        await settle();
        clock.advance(0.5);
      }
      await done;
      expect(timings.map((t) => [t.waitMs, t.inferMs])).toEqual([[3, 0.5]]);
    }
  });

  it("`executed()` reports no wait where the instance does not tell its own time", async () => {
    const timings: ExecutionTiming[] = [];
    const batcher = new DynamicBatcher({ instances: [new FakeInstance()], maxBatchSize: 8, clock: new FakeClock(), observer: { dequeued: () => {}, executed: (t) => void timings.push(t) } });
    await batcher.enqueue(fakeRequest(1));
    expect(timings.map((t) => t.waitMs)).toEqual([0]);
  });
});

describe("DynamicBatcher: a connection's signal outlives batchers", () => {
  it("`stop()` takes the batcher's abort listener off a shared signal once it drained, so each wake or reload adds none for good", async () => {
    const connection = new AbortController();
    for (let generation = 0; generation < 12; generation++) {
      const instance = new FakeInstance({ manual: true });
      const batcher = new DynamicBatcher({ instances: [instance], maxBatchSize: 1, clock: new FakeClock() });
      const running = batcher.enqueue(fakeRequest(1), { signal: connection.signal });
      const waiting = batcher.enqueue(fakeRequest(2), { signal: connection.signal });
      await settle();
      expect(EventEmitter.getEventListeners(connection.signal, "abort")).toHaveLength(1);
      const stopped = batcher.stop();
      instance.finish();
      await running;
      await settle();
      // Still listening while a request waits: an abort must still cancel it.
      expect(EventEmitter.getEventListeners(connection.signal, "abort")).toHaveLength(1);
      instance.finish();
      await waiting;
      await stopped;
      expect(EventEmitter.getEventListeners(connection.signal, "abort")).toHaveLength(0);
    }
  });
});
