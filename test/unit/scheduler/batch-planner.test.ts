import { describe, expect, it } from "vitest";
import { formBatch, missedDeadlines, planDispatch } from "../../../runtime/scheduler/dynamic/batch-planner.ts";
import type { DispatchState, PlannedRequest } from "../../../runtime/scheduler/dynamic/batch-planner.ts";

// The dynamic batcher's planner on plain data: queue state in, plan out.
const req = (batchSize: number, enqueuedAt = 0, shapeKey = "a"): PlannedRequest => ({ batchSize, enqueuedAt, shapeKey });

function state(over: Partial<DispatchState>): DispatchState {
  const formed = over.formed ?? [req(1)];
  return { now: 0, formed, queued: formed.length, maxBatchSize: 8, preferredBatchSizes: [], queueDelayMs: 0, mayArrive: () => undefined, waiting: false, worthWaiting: () => true, ...over };
}

describe("formBatch", () => {
  it("takes the longest run of one shape that fits; the first that cannot join ends it", () => {
    expect(formBatch([req(3), req(4), req(2), req(1)], 8).map((r) => r.batchSize)).toEqual([3, 4]);
    expect(formBatch([req(1), req(1, 0, "b"), req(1)], 8)).toHaveLength(1);
    expect(formBatch([req(20)], 8)).toHaveLength(1); // larger than the limit: alone, whole
    expect(formBatch([], 8)).toEqual([]);
  });
});

describe("planDispatch", () => {
  it("dispatches a full batch, the largest preferred size, or a blocked one at once", () => {
    expect(planDispatch(state({ formed: [req(4), req(4)], queueDelayMs: 5 }))).toEqual({ dispatch: true, count: 2, reason: "full" });
    expect(planDispatch(state({ formed: [req(2), req(2), req(1)], preferredBatchSizes: [2, 4], queueDelayMs: 5 }))).toEqual({ dispatch: true, count: 2, reason: "preferred" });
    expect(planDispatch(state({ formed: [req(1)], queued: 2, queueDelayMs: 5 }))).toEqual({ dispatch: true, count: 1, reason: "blocked" });
  });

  it("with a fixed delay: at once when 0, waits until the oldest has waited it, then takes the largest preferred size formed", () => {
    expect(planDispatch(state({}))).toMatchObject({ dispatch: true, reason: "at_once" });
    expect(planDispatch(state({ now: 1, formed: [req(1, 0)], queueDelayMs: 5 }))).toEqual({ dispatch: false, untilMs: 5, coarse: false });
    expect(planDispatch(state({ now: 5, formed: [req(2, 0), req(1, 1)], preferredBatchSizes: [2, 4], queueDelayMs: 5 }))).toEqual({ dispatch: true, count: 1, reason: "delay" });
  });

  it("does not start a wait when nothing more can arrive or waits have not been paying; an ongoing wait goes on", () => {
    expect(planDispatch(state({ now: 1, queueDelayMs: 5, mayArrive: () => false }))).toMatchObject({ reason: "no_arrivals" });
    expect(planDispatch(state({ now: 1, queueDelayMs: 5, worthWaiting: () => false }))).toMatchObject({ reason: "not_paying" });
    expect(planDispatch(state({ now: 1, queueDelayMs: 5, worthWaiting: () => false, waiting: true }))).toMatchObject({ dispatch: false });
  });

  it("with a latency target follows the adaptive law, and reads its inputs only when it gets there", () => {
    let read = 0;
    const adaptive = () => (read++, { targetMs: 20, cost: { a: 0.1, b: 1 } });
    expect(planDispatch(state({ formed: [req(8)], adaptive }))).toMatchObject({ reason: "full" });
    expect(read).toBe(0);
    expect(planDispatch(state({ now: 0, adaptive, mayArrive: () => false }))).toMatchObject({ reason: "no_arrivals" });
    expect(planDispatch(state({ now: 0, adaptive }))).toMatchObject({ dispatch: false });
    expect(read).toBe(1);
  });
});

describe("missedDeadlines", () => {
  it("marks the requests that would finish past the target or their own shorter timeout", () => {
    const batch = [req(1, 0), req(1, 15)];
    expect(missedDeadlines(batch, { now: 16, costMs: 5, targetMs: 20, timeoutMs: () => 0 })).toEqual([true, false]);
    expect(missedDeadlines(batch, { now: 16, costMs: 5, targetMs: 20, timeoutMs: (i) => (i === 1 ? 5.5 : 0) })).toEqual([true, true]);
    // An execution longer than the deadline itself runs: shedding would refuse everything.
    expect(missedDeadlines(batch, { now: 16, costMs: 5, targetMs: 20, timeoutMs: (i) => (i === 1 ? 3 : 0) })).toEqual([true, false]);
    // Ready when it could first have left: the batcher's own hold is not counted against it.
    expect(missedDeadlines(batch, { now: 16, readyAt: 10, costMs: 5, targetMs: 20, timeoutMs: () => 0 })).toEqual([false, false]);
  });
});
