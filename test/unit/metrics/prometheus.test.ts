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
    expect(family(text, "tensorfn_batch_executions_total")).toEqual(['tensorfn_batch_executions_total{model="mlp",version="1",batch_size="1"} 2', 'tensorfn_batch_executions_total{model="mlp",version="1",batch_size="3"} 1']);
    // A histogram's buckets are cumulative, then +Inf, _sum and _count.
    stats.loaded(3, "disk");
    stats.loaded(40, "parked");
    const loads = createPrometheus({ entries: () => [entry("mlp", stats)], budgets: {} }).render();
    expect(family(loads, "tensorfn_cold_start_seconds_bucket").slice(0, 4)).toEqual([
      'tensorfn_cold_start_seconds_bucket{model="mlp",version="1",le="0.005"} 1',
      'tensorfn_cold_start_seconds_bucket{model="mlp",version="1",le="0.01"} 1',
      'tensorfn_cold_start_seconds_bucket{model="mlp",version="1",le="0.025"} 1',
      'tensorfn_cold_start_seconds_bucket{model="mlp",version="1",le="0.05"} 2',
    ]);
    expect(family(loads, "tensorfn_cold_start_seconds_bucket").at(-1)).toBe('tensorfn_cold_start_seconds_bucket{model="mlp",version="1",le="+Inf"} 2');
    expect(family(loads, "tensorfn_cold_start_seconds_count")).toEqual(['tensorfn_cold_start_seconds_count{model="mlp",version="1"} 2']);
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

describe("createPrometheus: scrapes of many functions", () => {
  it("writes a version's lines again only when they change, and what changed shows in the next scrape", async () => {
    const stats = new ModelStats();
    const list = [entry("a", stats), entry("b")];
    const prometheus = createPrometheus({ entries: () => list, budgets: {} });
    const first = prometheus.render();
    expect(family(first, "nv_inference_request_success")).toEqual(['nv_inference_request_success{model="a",version="1"} 0', 'nv_inference_request_success{model="b",version="1"} 0']);
    expect(prometheus.render()).toBe(first);
    stats.succeeded(2);
    list[0] = { ...list[0]!, state: "PARKED", pending: 3 };
    const second = prometheus.render();
    expect(family(second, "nv_inference_request_success")[0]).toBe('nv_inference_request_success{model="a",version="1"} 1');
    expect(family(second, "nv_inference_pending_request_count")[0]).toBe('nv_inference_pending_request_count{model="a",version="1"} 3');
    // One series per version, for the state it is in.
    expect(family(second, "tensorfn_deployment_state")).toEqual(['tensorfn_deployment_state{model="a",version="1",state="PARKED"} 1', 'tensorfn_deployment_state{model="b",version="1",state="READY"} 1']);
    list.pop();
    const third = prometheus.render();
    expect(third).not.toContain('model="b"');
    expect(new TextDecoder().decode(await prometheus.renderBytesAsync())).toBe(third);
    expect(new TextDecoder().decode(prometheus.renderBytes())).toBe(third);
  });

  it("reads thousands of versions in slices, letting the event loop run between them", async () => {
    const list = Array.from({ length: 2000 }, (_, i) => entry(`f${i}`));
    const prometheus = createPrometheus({ entries: () => list, budgets: {} });
    let turns = 0;
    const ticking = setInterval(() => turns++, 0);
    const bytes = await prometheus.renderBytesAsync();
    clearInterval(ticking);
    expect(turns).toBeGreaterThan(0);
    expect(new TextDecoder().decode(bytes)).toBe(prometheus.render());
  });
});
