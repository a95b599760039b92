import { describe, expect, it } from "vitest";
import { chooseThread, INLINE_MAX_BATCH_US, INLINE_THRESHOLD_US, inlineCandidate, threadParameters } from "../../../runtime/lifecycle/execution-thread.ts";

describe("execution_thread auto", () => {
  it("`chooseThread()` picks main under the batch-1 threshold when the largest batch is cheap too", () => {
    expect(chooseThread({ batch1Us: 13, maxBatchUs: 40, maxBatch: 8 })).toBe("main");
    expect(chooseThread({ batch1Us: INLINE_THRESHOLD_US - 1 })).toBe("main");
  });

  it("`chooseThread()` picks worker at or over the threshold, or when the largest batch would hold the loop too long", () => {
    expect(chooseThread({ batch1Us: INLINE_THRESHOLD_US })).toBe("worker");
    expect(chooseThread({ batch1Us: 12_000 })).toBe("worker");
    expect(chooseThread({ batch1Us: 100, maxBatchUs: INLINE_MAX_BATCH_US, maxBatch: 64 })).toBe("worker");
  });

  it("`inlineCandidate()` considers inline only for one instance that cannot scale out", () => {
    expect(inlineCandidate(1, undefined)).toBe(true);
    expect(inlineCandidate(1, 1)).toBe(true);
    expect(inlineCandidate(2, undefined)).toBe(false);
    expect(inlineCandidate(1, 4)).toBe(false);
  });

  it("`threadParameters()` says what was chosen, that auto chose it, and what it measured", () => {
    expect(threadParameters("auto", "main", { batch1Us: 13.04, maxBatchUs: 20.5, maxBatch: 8 })).toEqual({
      execution_thread: { string_value: "main" },
      execution_thread_requested: { string_value: "auto" },
      execution_thread_measured_us: { string_value: "13.0" },
      execution_thread_measured_max_batch_us: { string_value: "20.5" },
    });
    expect(threadParameters("worker", "worker")).toEqual({ execution_thread: { string_value: "worker" } });
  });
});
