import { describe, expect, it } from "vitest";
import { diffStats, parseModelStats } from "../../../adapters/bench/server-stats.ts";

const d = (count: number, ns: number) => ({ count, ns });

/** Triton's statistics JSON (PROTOCOL.md §1.10) for one version. */
function tritonStats(n: { requests: number; executions: number; inferences: number; queueNs: number; computeNs: [number, number, number]; batchStats?: boolean }, version = "1") {
  const [input, infer, output] = n.computeNs;
  return {
    name: "m",
    version,
    last_inference: 0,
    inference_count: n.inferences,
    execution_count: n.executions,
    inference_stats: {
      success: d(n.requests, n.requests * 2_000_000),
      fail: d(1, 5),
      queue: d(n.requests, n.queueNs),
      compute_input: d(n.executions, input),
      compute_infer: d(n.executions, infer),
      compute_output: d(n.executions, output),
      cache_hit: d(0, 0),
      cache_miss: d(0, 0),
    },
    batch_stats: n.batchStats === false ? undefined : [{ batch_size: 4, compute_input: d(n.executions, input), compute_infer: d(n.executions, infer), compute_output: d(n.executions, output) }],
  };
}

describe("parseModelStats() and diffStats()", () => {
  it("derives batch size, queue per request and compute per execution from two readings", () => {
    const before = parseModelStats({ model_stats: [tritonStats({ requests: 10, executions: 5, inferences: 10, queueNs: 1_000_000, computeNs: [1e6, 10e6, 1e6] })] });
    const after = parseModelStats({ model_stats: [tritonStats({ requests: 90, executions: 25, inferences: 170, queueNs: 9_000_000, computeNs: [3e6, 50e6, 3e6] })] });
    expect(diffStats(before, after)).toEqual({
      inferenceCount: 160,
      executionCount: 20,
      successCount: 80,
      failCount: 0,
      avgBatchSize: 8,
      queueUsPerRequest: 100, // 8 ms over 80 requests
      requestUsPerRequest: 2000,
      computeUsPerExecution: 2200, // (2 + 40 + 2) ms over 20 executions
      computeInputUsPerExecution: 100,
      computeInferUsPerExecution: 2000,
      computeOutputUsPerExecution: 100,
    });
  });

  it("counts executions from batch_stats when inference_stats charges compute per request (Triton)", () => {
    // 4 executions of batch 4: Triton adds each execution's 1 ms once per request, 16 ms in all.
    const before = parseModelStats({ model_stats: [{ ...tritonStats({ requests: 0, executions: 0, inferences: 0, queueNs: 0, computeNs: [0, 0, 0] }), batch_stats: [] }] });
    const after = parseModelStats({
      model_stats: [
        {
          ...tritonStats({ requests: 16, executions: 4, inferences: 16, queueNs: 0, computeNs: [0, 16e6, 0] }),
          batch_stats: [{ batch_size: 4, compute_input: d(4, 0), compute_infer: d(4, 4e6), compute_output: d(4, 0) }],
        },
      ],
    });
    const diff = diffStats(before, after);
    expect(diff).toMatchObject({ avgBatchSize: 4, computeUsPerExecution: 1000, computeInferUsPerExecution: 1000 });
  });

  it("falls back to inference_stats over Δexecution_count without batch_stats", () => {
    const zero = { requests: 0, executions: 0, inferences: 0, queueNs: 0, computeNs: [0, 0, 0] as [number, number, number], batchStats: false };
    const before = parseModelStats({ model_stats: [tritonStats(zero)] });
    const after = parseModelStats({ model_stats: [tritonStats({ ...zero, requests: 6, executions: 3, inferences: 6, computeNs: [0, 3e6, 0] })] });
    expect(diffStats(before, after)).toMatchObject({ avgBatchSize: 2, computeUsPerExecution: 1000 });
  });

  it("sums versions unless one is asked for, and reads 64-bit counters sent as strings", () => {
    const json = {
      model_stats: [
        tritonStats({ requests: 1, executions: 1, inferences: 1, queueNs: 0, computeNs: [0, 0, 0] }, "1"),
        { ...tritonStats({ requests: 2, executions: 2, inferences: 2, queueNs: 0, computeNs: [0, 0, 0] }, "2"), inference_count: "2" },
      ],
    };
    expect(parseModelStats(json).inferenceCount).toBe(3);
    expect(parseModelStats(json, "2").inferenceCount).toBe(2);
  });

  it("gives null for a window with no traffic and a reason when counters went backwards", () => {
    const reading = parseModelStats({ model_stats: [tritonStats({ requests: 5, executions: 5, inferences: 5, queueNs: 5, computeNs: [5, 5, 5] })] });
    expect(diffStats(reading, reading)).toMatchObject({ avgBatchSize: null, queueUsPerRequest: null, computeUsPerExecution: null });
    const reset = parseModelStats({ model_stats: [tritonStats({ requests: 0, executions: 0, inferences: 0, queueNs: 0, computeNs: [0, 0, 0] })] });
    expect(diffStats(reading, reset)).toMatch(/went backwards/);
  });

  it("refuses a document without model_stats", () => {
    expect(() => parseModelStats({ error: "nope" })).toThrow(/model_stats/);
  });
});
