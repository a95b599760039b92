import { describe, expect, it } from "vitest";
import { ModelStats } from "../../../runtime/metrics/mod.ts";

describe("ModelStats", () => {
  it("`executed()` counts the model's own time as compute_infer and each request's wait for the loop's turn as queue", () => {
    const stats = new ModelStats();
    stats.dequeued(1);
    stats.dequeued(2);
    stats.executed({ rows: 2, requests: 2, inputMs: 0.01, inferMs: 0.3, waitMs: 1.5, outputMs: 0.02, startMs: 0, instance: 1 });
    const { inference_stats: s, batch_stats } = stats.toJSON("mlp", "1");
    expect(s.compute_infer).toEqual({ count: 1, ns: 300_000 });
    // 1 + 2 ms in the scheduler's queue, then 1.5 ms each waiting for the turn.
    expect(s.queue).toEqual({ count: 2, ns: 6_000_000 });
    expect(batch_stats).toEqual([expect.objectContaining({ batch_size: 2, compute_infer: { count: 1, ns: 300_000 } })]);
  });
});
