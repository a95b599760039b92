import { describe, expect, it } from "vitest";
import { DynamicBatcher, missesDeadline, planBatch } from "../../../runtime/scheduler/mod.ts";
import type { ModelInstance, RunOptions } from "../../../runtime/scheduler/mod.ts";
import type { Tensor } from "../../../runtime/mod.ts";
import { ClientConnections } from "../../../runtime/call/client-connections.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { fakeRequest, settle } from "../../support/fake-instance.ts";

const base = { now: 10, rows: 4, oldestAt: 9, newestAt: 9.9, targetMs: 20, cost: { a: 0.05, b: 1 } };

describe("planBatch (the adaptive law)", () => {
  it("dispatches before the first execution: there is no cost to weigh yet", () => {
    expect(planBatch({ ...base, cost: undefined })).toEqual({ dispatch: true });
  });

  it("dispatches at once when arrivals are further apart than b / n", () => {
    expect(planBatch({ ...base, gapMs: 0.3 })).toEqual({ dispatch: true }); // b / n = 0.25
  });

  it("waits at most b / n past the last arrival while arrivals are frequent", () => {
    expect(planBatch({ ...base, gapMs: 0.1 })).toEqual({ dispatch: false, untilMs: 9.9 + 0.25 });
  });

  it("counts an execution's wait for its turn against the target, not in b / n", () => {
    // The oldest must leave by 9 + 0.9 × 20 − cost(5) − turn = 25.75 − turn.
    expect(planBatch({ ...base, gapMs: 0.1, turnMs: 15.7 })).toEqual({ dispatch: false, untilMs: expect.closeTo(10.05, 6) });
    expect(planBatch({ ...base, gapMs: 0.1, turnMs: 16 })).toEqual({ dispatch: true });
  });

  it("never waits past the point where the oldest would miss the target", () => {
    const late = planBatch({ ...base, now: 26.5, oldestAt: 9, newestAt: 26.4, gapMs: 0.1 });
    // 9 + 20·0.9 − (0.05·5 + 1) = 25.75 < now
    expect(late).toEqual({ dispatch: true });
  });

  it("honours max_queue_delay as a ceiling", () => {
    expect(planBatch({ ...base, gapMs: 0.1, capMs: 1.125 })).toEqual({ dispatch: false, untilMs: 10.125 });
    expect(planBatch({ ...base, now: 10.125, gapMs: 0.1, capMs: 1.125 })).toEqual({ dispatch: true });
  });

  it("`missesDeadline()` is true only when the batch would end past the deadline", () => {
    expect(missesDeadline(15, 0, 20, 4)).toBe(false);
    expect(missesDeadline(17, 0, 20, 4)).toBe(true);
    expect(missesDeadline(17, 0, 0, 4)).toBe(false);
    expect(missesDeadline(17, 0, 20, 25)).toBe(false); // the execution alone is too slow: run, and learn

  });
});

describe("planBatch in a closed loop (the next arrival predicted: `expectedAt`)", () => {
  it("waits for a client due within the target however long the mean gap, until b past its due time", () => {
    // The mean gap (3 ms) says dispatch; the client due at 10.6 says wait.
    expect(planBatch({ ...base, gapMs: 3, expectedAt: 10.6 })).toEqual({ dispatch: false, untilMs: 10.6 + 1 });
  });

  it("dispatches when none is expected, when the next is due too late for the target, or overdue by more than b", () => {
    expect(planBatch({ ...base, gapMs: 0.01, expectedAt: Infinity })).toEqual({ dispatch: true });
    // 9 + 0.9 × 20 − cost(5) = 25.75: a client due then cannot join in time.
    expect(planBatch({ ...base, expectedAt: 25.8 })).toEqual({ dispatch: true });
    expect(planBatch({ ...base, expectedAt: 8.9 })).toEqual({ dispatch: true }); // due 1.1 ms ago, b = 1
    expect(planBatch({ ...base, expectedAt: 9.5 })).toEqual({ dispatch: false, untilMs: 10.5 });
  });

  it("keeps the timer's lateness out of the target's budget", () => {
    expect(planBatch({ ...base, now: 23, oldestAt: 9, newestAt: 22.9, expectedAt: 23.5 })).toEqual({ dispatch: false, untilMs: 24.5 });
    expect(planBatch({ ...base, now: 23, oldestAt: 9, newestAt: 22.9, expectedAt: 23.5, latenessMs: 2 })).toEqual({ dispatch: false, untilMs: 23.75 });
  });
});

/** An instance whose execution takes `a·rows + b` ms of fake-clock time. */
class TimedInstance implements ModelInstance {
  readonly batches: number[] = [];
  readonly clock: FakeClock;
  readonly a: number;
  readonly b: number;
  /** Ms each execution first waits for its turn (an event-loop session's wait), told apart through `computed`. */
  readonly turnMs: number;
  /** Present when the instance computes on a later turn (as inline onnxruntime-node sessions do): a zero timer. */
  computeTurn?: (fn: () => void) => void;
  constructor(clock: FakeClock, a: number, b: number, turnMs = 0, laterTurn = false) {
    if (laterTurn) this.computeTurn = (fn) => void clock.setTimeout(fn, 0);
    this.clock = clock;
    this.a = a;
    this.b = b;
    this.turnMs = turnMs;
  }
  run(feeds: Record<string, Tensor>, options?: RunOptions): Promise<Record<string, Tensor>> {
    const rows = feeds.x!.shape[0]!;
    this.batches.push(rows);
    const computeMs = this.a * rows + this.b;
    return new Promise((resolve) =>
      this.clock.setTimeout(() => {
        if (this.turnMs > 0) options?.computed?.(computeMs);
        resolve({ y: feeds.x! });
      }, this.turnMs + computeMs),
    );
  }
}

/** Open-loop arrivals every `gapMs` for `durationMs`; returns each request's latency or "shed". */
async function simulate(options: { a: number; b: number; gapMs: number; durationMs: number; targetMs: number; maxBatchSize?: number; turnMs?: number }) {
  const clock = new FakeClock();
  const instance = new TimedInstance(clock, options.a, options.b, options.turnMs);
  const batcher = new DynamicBatcher({ instances: [instance], maxBatchSize: options.maxBatchSize ?? 64, targetLatencyMs: options.targetMs, clock });
  const outcomes: Promise<number | string>[] = [];
  const step = 0.05;
  for (let t = 0; t < options.durationMs + 200; t += step) {
    if (t < options.durationMs && Math.abs(t / options.gapMs - Math.round(t / options.gapMs)) < 1e-6) {
      const start = clock.now();
      outcomes.push(batcher.enqueue(fakeRequest(1)).then(() => clock.now() - start, (e: { code: string; message: string }) => `${e.code}: ${e.message}`));
    }
    await settle();
    clock.advance(step);
  }
  return { results: await Promise.all(outcomes), batches: instance.batches, fit: batcher.cost! };
}

/**
 * A closed loop: `thinkMs[i]` is how long client i takes from its answer to its next request
 * (`paused` clients send once, then stop), each on a keep-alive connection the batcher learns of
 * through the HTTP layer's ClientConnections, as served. Returns each request's latency or "shed".
 */
async function closedLoop(options: { a: number; b: number; thinkMs: number[]; durationMs: number; targetMs: number; predicted: boolean; paused?: number }) {
  const clock = new FakeClock();
  const instance = new TimedInstance(clock, options.a, options.b, 0, true);
  const clients = new ClientConnections({ clock });
  const arrivals = options.predicted ? clients : { mayArrive: () => clients.mayArrive() };
  const batcher = new DynamicBatcher({ instances: [instance], maxBatchSize: 64, targetLatencyMs: options.targetMs, clock, arrivals });
  const outcomes: (number | string)[] = [];
  const connections = options.thinkMs.map(() => clients.opened());
  const send = (i: number) => {
    if (clock.now() >= options.durationMs) return;
    const start = clock.now();
    clients.settled(connections[i]!);
    batcher.enqueue(fakeRequest(i)).then(
      () => outcomes.push(clock.now() - start),
      (e: { code: string }) => outcomes.push(e.code),
    ).finally(() => {
      clients.answered(connections[i]!);
      if (i >= options.thinkMs.length - (options.paused ?? 0) && clock.now() > 0) return;
      clock.setTimeout(() => send(i), options.thinkMs[i]!);
    });
  };
  options.thinkMs.forEach((_, i) => send(i));
  for (let t = 0; t < options.durationMs + 100; t += 0.05) {
    await settle();
    clock.advance(0.05);
  }
  return { outcomes, batches: instance.batches };
}

describe("DynamicBatcher with a latency target in a closed loop (8 clients, cost 0.05·n + 1 ms)", () => {
  // The clients come back 0.1–0.8 ms after their answers: slower than b / n for most n.
  const thinkMs = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8];

  it("with the arrivals predicted, waits for every client and serves more than by the mean gap, under the target", async () => {
    const predicted = await closedLoop({ a: 0.05, b: 1, thinkMs, durationMs: 300, targetMs: 20, predicted: true });
    const gap = await closedLoop({ a: 0.05, b: 1, thinkMs, durationMs: 300, targetMs: 20, predicted: false });
    for (const run of [predicted, gap]) expect(run.outcomes.every((o) => typeof o === "number" && o <= 20)).toBe(true);
    const steady = predicted.batches.slice(10);
    expect(steady.reduce((n, b) => n + b, 0) / steady.length).toBeGreaterThan(7.5);
    expect(gap.batches.slice(10).reduce((n, b) => n + b, 0) / gap.batches.slice(10).length).toBeLessThan(6);
    expect(predicted.outcomes.length).toBeGreaterThan(gap.outcomes.length);
  });

  it("does not keep waiting for a client that stopped sending: the rest batch together, well under the target", async () => {
    const { outcomes, batches } = await closedLoop({ a: 0.05, b: 1, thinkMs, durationMs: 300, targetMs: 20, predicted: true, paused: 1 });
    const late = outcomes.slice(100);
    expect(late.every((o) => typeof o === "number" && o < 5)).toBe(true);
    expect(batches.slice(-10).every((n) => n === 7)).toBe(true);
  });
});

describe("DynamicBatcher with a latency target (simulated cost 0.02·n + 1 ms)", () => {
  it("fits the cost it sees, batches, and keeps every request under the target", async () => {
    const { results, batches, fit } = await simulate({ a: 0.02, b: 1, gapMs: 0.1, durationMs: 100, targetMs: 20 });
    const latencies = results.filter((r): r is number => typeof r === "number");
    expect(latencies.length).toBe(results.length);
    expect(Math.max(...latencies)).toBeLessThanOrEqual(20);
    expect(fit.b).toBeCloseTo(1, 1);
    expect(fit.a).toBeCloseTo(0.02, 2);
    // 10 arrivals per ms and 1 ms fixed cost: batches must be large to keep up at all.
    expect(results.length / batches.length).toBeGreaterThan(8);
  });

  it("fits what an execution computes, not its wait for a turn of the event loop, where the instance tells them apart", async () => {
    // Each execution waits 2 ms for its turn: counted, it would read as a fixed cost of 3 ms.
    const { fit } = await simulate({ a: 0.02, b: 1, gapMs: 0.1, durationMs: 100, targetMs: 20, turnMs: 2 });
    expect(fit.b).toBeCloseTo(1, 1);
    expect(fit.a).toBeCloseTo(0.02, 2);
  });

  it("counts that wait in every deadline: overloaded, what it runs answers within the target once the first executions taught it the cost", async () => {
    // Each execution waits 2 ms for its turn before computing; 20 arrivals per ms, 10 rows per ms served at most.
    const { results } = await simulate({ a: 0.1, b: 1, gapMs: 0.05, durationMs: 60, targetMs: 10, turnMs: 2 });
    const steady = results.slice(200); // after 10 ms
    const served = steady.filter((r): r is number => typeof r === "number");
    expect(served.length).toBeGreaterThan(0);
    expect(steady.length - served.length).toBeGreaterThan(0);
    expect(Math.max(...served)).toBeLessThanOrEqual(10 + 1e-6);
  });

  it("dispatches a lone request at once when arrivals are far apart", async () => {
    const { results, batches } = await simulate({ a: 0.02, b: 1, gapMs: 5, durationMs: 50, targetMs: 20 });
    expect(batches.every((n) => n === 1)).toBe(true);
    expect(results.slice(1).every((r) => typeof r === "number" && Math.abs(r - 1.02) < 0.06)).toBe(true);
  });

  it("sheds (UNAVAILABLE) requests that can no longer meet the target instead of running them late", async () => {
    // Overloaded: 20 arrivals per ms, 0.1 ms per row: at most 10 rows per ms can be served.
    const { results } = await simulate({ a: 0.1, b: 1, gapMs: 0.05, durationMs: 60, targetMs: 10 });
    const shed = results.filter((r) => typeof r === "string");
    const served = results.filter((r): r is number => typeof r === "number");
    expect(shed.length).toBeGreaterThan(0);
    expect(shed[0]).toMatch(/^UNAVAILABLE: request shed: .*past its 10 ms deadline/);
    expect(served.length).toBeGreaterThan(0);
    expect(Math.max(...served)).toBeLessThanOrEqual(10 + 1e-6);
  });
});
