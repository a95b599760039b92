import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";
import { requireTool } from "../support/require-tool.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ repository: tempRepository("simple", "mlp"), histogramLatencies: true });
});
afterAll(() => server.close());

const body = JSON.stringify({ inputs: [{ name: "input", datatype: "FP32", shape: [1, 512], data: new Array(512).fill(0.5) }] });

async function metrics(): Promise<string> {
  const res = await fetch(`${server.url}/metrics`);
  expect(res.headers.get("content-type")).toMatch(/text\/plain/);
  return await res.text();
}

/** The value of one series, e.g. value(text, "nv_inference_count", {model: "mlp", version: "1"}). */
function value(text: string, name: string, labels: Record<string, string>): number {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = text.split("\n").find((l) => l.startsWith(`${name}{`) && want.every((w) => l.includes(w)));
  if (!line) throw new Error(`no series ${name} ${JSON.stringify(labels)}`);
  return Number(line.slice(line.lastIndexOf(" ") + 1));
}

describe("Prometheus metrics", () => {
  it("has series only for versions that have loaded (as Triton): none for a lazy function never called", async () => {
    expect(await metrics()).not.toContain('model="simple"');
    const r = await fetch(`${server.url}/v2/models/simple/infer`, {
      method: "POST",
      body: JSON.stringify({ inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: new Array(16).fill(1) })) }),
    });
    expect(r.status).toBe(200);
    const text = await metrics();
    expect(value(text, "nv_inference_count", { model: "simple", version: "1" })).toBe(1);
    expect(value(text, "tensorfn_deployment_state", { model: "simple", state: "READY" })).toBe(1);
  });

  it("agree with the statistics endpoint after a burst", async () => {
    await Promise.all(Array.from({ length: 40 }, () => fetch(`${server.url}/v2/models/mlp/infer`, { method: "POST", body })));
    await fetch(`${server.url}/v2/models/mlp/infer`, { method: "POST", body: "{ broken" });
    const [text, stats] = await Promise.all([metrics(), fetch(`${server.url}/v2/models/mlp/stats`).then((r) => r.json())]);
    const s = stats.model_stats[0];
    const labels = { model: "mlp", version: "1" };
    expect(value(text, "nv_inference_request_success", labels)).toBe(s.inference_stats.success.count);
    expect(value(text, "nv_inference_request_success", labels)).toBe(40);
    expect(value(text, "nv_inference_count", labels)).toBe(s.inference_count);
    expect(value(text, "nv_inference_exec_count", labels)).toBe(s.execution_count);
    expect(value(text, "nv_inference_queue_duration_us", labels)).toBe(Math.round(s.inference_stats.queue.ns / 1000));
    expect(value(text, "nv_inference_compute_infer_duration_us", labels)).toBe(Math.round(s.inference_stats.compute_infer.ns / 1000));
    expect(value(text, "nv_inference_request_failure", { ...labels, reason: "OTHER" })).toBe(0); // malformed JSON fails before the model
    expect(value(text, "tensorfn_request_duration_seconds_count", labels)).toBe(40);
    expect(value(text, "tensorfn_deployment_state", { ...labels, state: "READY" })).toBe(1);
    expect(value(text, "tensorfn_instances", labels)).toBe(1);
    expect(value(text, "tensorfn_instances_target", labels)).toBe(1);
    // Executions by batch size add up to the statistics' counts.
    const bySize = text.split("\n").filter((l) => l.startsWith('tensorfn_batch_executions_total{model="mlp",version="1"'));
    const sizes = bySize.map((l) => [Number(/batch_size="(\d+)"/.exec(l)![1]), Number(l.slice(l.lastIndexOf(" ") + 1))] as const);
    expect(sizes.reduce((n, [, count]) => n + count, 0)).toBe(s.execution_count);
    expect(sizes.reduce((n, [size, count]) => n + size * count, 0)).toBe(s.inference_count);
    expect(value(text, "nv_inference_pending_request_count", labels)).toBe(0);
  });

  it("counts failures by Triton's reasons", async () => {
    const bad = JSON.stringify({ inputs: [{ name: "input", datatype: "FP32", shape: [1, 3], data: [1, 2, 3] }] });
    await fetch(`${server.url}/v2/models/mlp/infer`, { method: "POST", body: bad });
    expect(value(await metrics(), "nv_inference_request_failure", { model: "mlp", version: "1", reason: "OTHER" })).toBe(1);
  });

  it("counts loads, parks and unloads with why, and cold starts in a histogram", async () => {
    const simple = JSON.stringify({ inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: new Array(16).fill(1) })) });
    const call = (path: string, payload?: string) => fetch(`${server.url}${path}`, { method: "POST", body: payload });
    await call("/v2/models/simple/infer", simple); // cold: from disk
    await call("/v2/repository/models/simple/park");
    await call("/v2/models/simple/infer", simple); // from PARKED
    const text = await metrics();
    const labels = { model: "simple", version: "1" };
    expect(value(text, "tensorfn_lifecycle_events_total", { ...labels, event: "load", reason: "disk" })).toBe(1);
    expect(value(text, "tensorfn_lifecycle_events_total", { ...labels, event: "park", reason: "api" })).toBe(1);
    expect(value(text, "tensorfn_lifecycle_events_total", { ...labels, event: "load", reason: "parked" })).toBe(1);
    expect(value(text, "tensorfn_cold_start_seconds_count", labels)).toBe(2);
    await call("/v2/repository/models/simple/park");
    expect(value(await metrics(), "tensorfn_parked_bytes", labels)).toBeGreaterThan(0);
    expect(value(text, "nv_model_load_duration_secs", labels)).toBeGreaterThan(0);
  });

  // promtool lints naming conventions that Triton's own family names break (no `_total` suffix,
  // `_us` units, `nv_inference_count` ending in `_count`). Everything else must pass: the text
  // parses, and our own tensorfn_* families follow the conventions.
  // .ci/run installs Debian's prometheus package; without promtool the test fails, naming it.
  it("passes `promtool check metrics` except Triton's naming and prom-client's", async () => {
    requireTool("promtool");
    const run = spawnSync("promtool", ["check", "metrics"], { input: await metrics(), encoding: "utf8" });
    const problems = `${run.stdout}${run.stderr}`.split("\n").filter(Boolean);
    const tritonNaming = /^nv_\w+ (counter metrics should have "_total" suffix|non-histogram and non-summary metrics should not have "_count" suffix|metric names should not contain abbreviated units)$/;
    // prom-client's process metrics, as every Node exporter serves them: gauges named *_total.
    const promClientNaming = /^nodejs_active_\w+_total non-counter metrics should not have "_total" suffix$/;
    expect(problems.filter((p) => !tritonNaming.test(p) && !promClientNaming.test(p))).toEqual([]);
  });
});
