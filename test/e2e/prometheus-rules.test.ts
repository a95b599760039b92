import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { requireTool } from "../support/require-tool.ts";

// No server here: it runs once, not again under Bun and Deno (vitest.config.ts lists it).
describe("the shipped Prometheus alert rules", () => {
  it("pass `promtool check rules`", () => {
    requireTool("promtool");
    const check = spawnSync("promtool", ["check", "rules", "deploy/prometheus/alerts.yml"], { encoding: "utf8" });
    expect(check.stdout).toMatch(/SUCCESS: 8 rules found/);
    expect(check.status).toBe(0);
  });

  it("fire on the series that should raise them, and only those (`promtool test rules`)", () => {
    requireTool("promtool");
    const test = spawnSync("promtool", ["test", "rules", "deploy/prometheus/alerts.test.yml"], { encoding: "utf8" });
    expect(`${test.stdout}${test.stderr}`).toMatch(/SUCCESS/);
    expect(test.status).toBe(0);
  });
});

// The autoscalers' queries (deploy/kubernetes/overlays/keda, and the HPA's through
// deploy/prometheus/adapter-rules.yaml), run by promtool on two pods' sample series: one
// waiting 30 ms a request, the other 10 ms, their GPUs at 90 % and 50 %.
describe("the autoscalers' Prometheus queries", () => {
  const pods = ["tensorfn-a", "tensorfn-b"];
  const series = (name: string, pod: string, values: string, extra = "") => ({ series: `${name}{namespace="default",pod="${pod}"${extra}}`, values });
  const input = [
    // Per 15 s: pod a queues 150,000 µs over 5 requests (30 ms each), pod b 50,000 µs over 5 (10 ms each).
    series("nv_inference_queue_duration_us", "tensorfn-a", "0+150000x40", ',model="m",version="1"'),
    series("nv_inference_request_success", "tensorfn-a", "0+5x40", ',model="m",version="1"'),
    series("nv_inference_queue_duration_us", "tensorfn-b", "0+50000x40", ',model="m",version="1"'),
    series("nv_inference_request_success", "tensorfn-b", "0+5x40", ',model="m",version="1"'),
    series("nv_inference_pending_request_count", "tensorfn-a", "5x40", ',model="m",version="1"'),
    series("nv_inference_pending_request_count", "tensorfn-b", "7x40", ',model="m",version="1"'),
    series("nv_gpu_utilization", "tensorfn-a", "0.9x40", ',gpu_uuid="GPU-a"'),
    series("nv_gpu_utilization", "tensorfn-b", "0.5x40", ',gpu_uuid="GPU-b"'),
    // A pod that serves nothing: its queue time is 0, not NaN.
    series("nv_inference_queue_duration_us", "tensorfn-idle", "0x40", ',model="m",version="1"'),
    series("nv_inference_request_success", "tensorfn-idle", "0x40", ',model="m",version="1"'),
  ];

  it("give KEDA and the HPA what their targets assume", () => {
    requireTool("promtool");
    const scaled = parse(readFileSync("deploy/kubernetes/overlays/keda/scaledobject.yaml", "utf8")) as { spec: { triggers: { name: string; metadata: { query: string } }[] } };
    const keda = new Map(scaled.spec.triggers.map((t) => [t.name, t.metadata.query]));
    expect([...keda.keys()]).toEqual(["queue-length", "queue-time", "gpu-utilization"]);
    const adapter = (parse(readFileSync("deploy/prometheus/adapter-rules.yaml", "utf8")) as { rules: { name: { as: string }; metricsQuery: string }[] }).rules;
    const perPod = new Map(adapter.map((r) => [r.name.as, r.metricsQuery.replaceAll("<<.LabelMatchers>>", `namespace="default",pod=~"${pods.join("|")}"`).replaceAll("<<.GroupBy>>", "pod")]));
    const hpa = parse(readFileSync("deploy/kubernetes/overlays/hpa/hpa.yaml", "utf8")) as { spec: { metrics: { pods: { metric: { name: string } } }[] } };
    // Every metric the HPA asks for is one the adapter serves.
    expect(hpa.spec.metrics.map((m) => m.pods.metric.name).sort()).toEqual([...perPod.keys()].sort());

    const at = (expr: string, samples: { labels: string; value: number }[]) => ({ expr, eval_time: "5m", exp_samples: samples });
    // Queue times to the µs: rate()'s floating point leaves 20000.000000000004.
    const us = (expr: string) => `round(${expr})`;
    const tests = [
      at(keda.get("queue-length")!, [{ labels: "{}", value: 12 }]),
      at(us(keda.get("queue-time")!), [{ labels: "{}", value: 20000 }]),
      at(keda.get("gpu-utilization")!, [{ labels: "{}", value: 0.7 }]),
      at(us(keda.get("queue-time")!.replaceAll('pod=~"tensorfn-.*"', 'pod="tensorfn-idle"')), [{ labels: "{}", value: 0 }]),
      at(perPod.get("nv_inference_pending_request_count")!, [{ labels: '{pod="tensorfn-a"}', value: 5 }, { labels: '{pod="tensorfn-b"}', value: 7 }]),
      at(us(perPod.get("tensorfn_queue_us_per_request")!), [{ labels: '{pod="tensorfn-a"}', value: 30000 }, { labels: '{pod="tensorfn-b"}', value: 10000 }]),
      at(perPod.get("nv_gpu_utilization")!, [{ labels: '{pod="tensorfn-a"}', value: 0.9 }, { labels: '{pod="tensorfn-b"}', value: 0.5 }]),
    ];
    const dir = mkdtempSync(join(tmpdir(), "tensorfn-promql-"));
    const file = join(dir, "autoscalers.test.yml");
    writeFileSync(file, stringify({ rule_files: [], evaluation_interval: "15s", tests: [{ interval: "15s", input_series: input, promql_expr_test: tests }] }));
    const run = spawnSync("promtool", ["test", "rules", file], { encoding: "utf8" });
    expect(`${run.stdout}${run.stderr}`).toMatch(/SUCCESS/);
    expect(run.status).toBe(0);
  });
});
