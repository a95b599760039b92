import { describe, expect, it, vi } from "vitest";
import { createPrometheus, ModelStats } from "../../../runtime/metrics/mod.ts";
import type { MetricsEntry } from "../../../runtime/metrics/mod.ts";

const entry = (name: string, stats = new ModelStats()): MetricsEntry => ({
  name,
  version: "1",
  state: "READY",
  instances: 1,
  targetInstances: 1,
  pending: 0,
  stats,
  memory: { host: 0, device: 0 },
});

/** The lines of one family, without its HELP and TYPE comments. */
const family = (text: string, name: string) => text.split("\n").filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));

describe("createPrometheus", () => {
  it("writes the text format: HELP and TYPE per family, a blank line between families, cumulative histogram buckets", () => {
    const stats = new ModelStats();
    for (const rows of [1, 1, 3]) stats.executed({ rows, requests: rows, inputMs: 0, inferMs: 1, waitMs: 0, outputMs: 0, startMs: 0, instance: 1 });
    const text = createPrometheus({ entries: () => [entry("mlp", stats)], budgets: {} }).render();
    expect(text.startsWith("# HELP nv_inference_request_success Number of successful inference requests, all batch sizes\n# TYPE nv_inference_request_success counter\n")).toBe(true);
    expect(text.endsWith("\n") && !text.endsWith("\n\n")).toBe(true);
    expect(text).toContain('\n\n# HELP nv_inference_count Number of inferences performed (a batch of n counts n)\n# TYPE nv_inference_count counter\nnv_inference_count{model="mlp",version="1"} 5\n');
    expect(family(text, "tensorfn_batch_size_bucket").slice(0, 3)).toEqual([
      'tensorfn_batch_size_bucket{model="mlp",version="1",le="1"} 2',
      'tensorfn_batch_size_bucket{model="mlp",version="1",le="2"} 2',
      'tensorfn_batch_size_bucket{model="mlp",version="1",le="4"} 3',
    ]);
    expect(family(text, "tensorfn_batch_size_bucket").at(-1)).toBe('tensorfn_batch_size_bucket{model="mlp",version="1",le="+Inf"} 3');
    expect(family(text, "tensorfn_batch_size_sum")).toEqual(['tensorfn_batch_size_sum{model="mlp",version="1"} 5']);
    // No budget set: the family is still declared, with no samples.
    expect(text).toContain("# TYPE tensorfn_memory_budget_bytes gauge\n\n");
  });

  it("escapes backslashes, newlines and double quotes in label values", () => {
    const text = createPrometheus({ entries: () => [entry('a"b\\c\nd')], budgets: {} }).render();
    expect(family(text, "nv_inference_count")).toEqual(['nv_inference_count{model="a\\"b\\\\c\\nd",version="1"} 0']);
  });

  it("reads each version's statistics once per scrape, not once per family", () => {
    const stats = new ModelStats();
    const toJSON = vi.spyOn(stats, "toJSON");
    const metrics = vi.spyOn(stats, "metrics");
    const entries = vi.fn(() => [entry("mlp", stats)]);
    const prometheus = createPrometheus({ entries, budgets: {} }, { histogramLatencies: true });
    prometheus.render();
    expect([entries.mock.calls.length, toJSON.mock.calls.length, metrics.mock.calls.length]).toEqual([1, 1, 1]);
  });
});
