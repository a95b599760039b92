import { afterEach, describe, expect, it } from "vitest";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A repository with `simple` (the real ONNX model) and ensembles over it, by name → function.yaml. */
function repository(ensembles: Record<string, string>): string {
  const repo = tempRepository("simple");
  for (const [name, yaml] of Object.entries(ensembles)) {
    mkdirSync(join(repo, name, "1"), { recursive: true });
    writeFileSync(join(repo, name, "function.yaml"), yaml);
  }
  return repo;
}

const TENSORS = (inputs: string[], outputs: string[]) =>
  [`input: [${inputs.map((n) => `{ name: ${n}, data_type: TYPE_INT32, dims: [16] }`).join(", ")}]`, `output: [${outputs.map((n) => `{ name: ${n}, data_type: TYPE_INT32, dims: [16] }`).join(", ")}]`].join("\n");

// simple twice: (a+b) + (a-b) = 2a and (a+b) - (a-b) = 2b.
const TWICE = `platform: ensemble
max_batch_size: 8
${TENSORS(["A", "B"], ["TWO_A", "TWO_B"])}
ensemble_scheduling:
  step:
    - { model_name: simple, input_map: { INPUT0: A, INPUT1: B }, output_map: { OUTPUT0: sum, OUTPUT1: diff } }
    - { model_name: simple, input_map: { INPUT0: sum, INPUT1: diff }, output_map: { OUTPUT0: TWO_A, OUTPUT1: TWO_B } }
`;

// A diamond: two independent steps on the inputs, a third on both their outputs.
const DIAMOND = `platform: ensemble
max_batch_size: 8
${TENSORS(["A", "B"], ["OUT"])}
ensemble_scheduling:
  step:
    - { model_name: simple, input_map: { INPUT0: A, INPUT1: B }, output_map: { OUTPUT0: left } }
    - { model_name: simple, input_map: { INPUT0: B, INPUT1: A }, output_map: { OUTPUT1: right } }
    - { model_name: simple, input_map: { INPUT0: left, INPUT1: right }, output_map: { OUTPUT0: OUT } }
`;

const a = Array.from({ length: 16 }, (_, i) => i);
const b = Array.from({ length: 16 }, (_, i) => 100 - i);
const body = (names = ["A", "B"]) => JSON.stringify({ inputs: names.map((name, i) => ({ name, datatype: "INT32", shape: [1, 16], data: i === 0 ? a : b })) });

async function infer(name: string, payload = body()) {
  const response = await fetch(`${server!.url}/v2/models/${name}/infer`, { method: "POST", body: payload });
  return { status: response.status, json: await response.json() };
}

const statsOf = async (name: string) => (await (await fetch(`${server!.url}/v2/models/${name}/stats`)).json()).model_stats[0];

describe("ensembles (platform: ensemble)", () => {
  it("runs the steps as a chain, each through its function's scheduler, tensors passed between them", async () => {
    server = await startServer({ repository: repository({ twice: TWICE }) });
    const r = await infer("twice");
    expect(r.status).toBe(200);
    expect(r.json.model_name).toBe("twice");
    expect(Object.fromEntries(r.json.outputs.map((o: { name: string; data: number[] }) => [o.name, o.data]))).toEqual({ TWO_A: a.map((x) => 2 * x), TWO_B: b.map((x) => 2 * x) });
    // simple ran twice (one request per step); the ensemble answered once and executed nothing itself.
    expect((await statsOf("simple")).inference_count).toBe(2);
    const ensemble = await statsOf("twice");
    expect([ensemble.inference_stats.success.count, ensemble.execution_count]).toEqual([1, 0]);
  });

  it("serves the simple_twice example as bundled", async () => {
    server = await startServer({ repository: tempRepository("simple", "simple_twice") });
    const r = await infer("simple_twice");
    expect(r.json.outputs.map((o: { name: string; data: number[] }) => [o.name, o.data])).toEqual([["TWO_A", a.map((x) => 2 * x)], ["TWO_B", b.map((x) => 2 * x)]]);
  });

  it("runs independent steps concurrently and a step that needs both after them (a diamond)", async () => {
    server = await startServer({ repository: repository({ diamond: DIAMOND }) });
    const results = await Promise.all(Array.from({ length: 8 }, () => infer("diamond")));
    // left = a + b, right = b - a, OUT = left + right = 2b.
    for (const r of results) expect(r.json.outputs[0].data).toEqual(b.map((x) => 2 * x));
    // Three step requests per pipeline, each through simple's own queue and batcher.
    expect((await statsOf("simple")).inference_count).toBe(24);
  });

  it("sends a step more rows than its function's max_batch_size as several requests, and joins their outputs in order (ours)", async () => {
    // A non-batching ensemble passing whole [-1, 16] tensors to simple (max_batch_size 8): 20 rows go as 8 + 8 + 4.
    const WIDE = `platform: ensemble
max_batch_size: 0
input: [{ name: A, data_type: TYPE_INT32, dims: [-1, 16] }, { name: B, data_type: TYPE_INT32, dims: [-1, 16] }]
output: [{ name: SUM, data_type: TYPE_INT32, dims: [-1, 16] }]
ensemble_scheduling:
  step:
    - { model_name: simple, input_map: { INPUT0: A, INPUT1: B }, output_map: { OUTPUT0: SUM } }
`;
    server = await startServer({ repository: repository({ wide: WIDE }) });
    const rows = 20;
    const values = (base: number) => Array.from({ length: rows * 16 }, (_, i) => base + i);
    const payload = JSON.stringify({ inputs: ["A", "B"].map((name, i) => ({ name, datatype: "INT32", shape: [rows, 16], data: values(i * 1000) })) });
    const r = await infer("wide", payload);
    expect(r.status).toBe(200);
    expect(r.json.outputs[0].shape).toEqual([rows, 16]);
    expect(r.json.outputs[0].data).toEqual(values(0).map((v, i) => v + values(1000)[i]!));
    expect((await statsOf("simple")).inference_count).toBe(rows);
    expect((await statsOf("simple")).inference_stats.success.count).toBe(3);
    // More rows than 64 full requests of the step's function: refused as one request over its max_batch_size.
    const huge = 8 * 64 + 1;
    const tooMany = await infer("wide", JSON.stringify({ inputs: ["A", "B"].map((name) => ({ name, datatype: "INT32", shape: [huge, 16], data: Array(huge * 16).fill(1) })) }));
    expect(tooMany.status).toBe(400);
    expect(tooMany.json.error).toMatch(/batch-size must be <= 8/);
  });

  it("answers a request the ensemble's own config refuses with 400, before any step runs", async () => {
    server = await startServer({ repository: repository({ twice: TWICE }) });
    const wrong = await infer("twice", body(["A", "C"]));
    expect(wrong.status).toBe(400);
    expect((await statsOf("simple")).inference_count).toBe(0);
  });

  it("fails to load when a step does not fit its function, naming the step and the tensor; the index says why", async () => {
    const mismatched = TWICE.replace("{ name: A, data_type: TYPE_INT32, dims: [16] }", "{ name: A, data_type: TYPE_FP32, dims: [16] }");
    const unmapped = TWICE.replace("input_map: { INPUT0: sum, INPUT1: diff }", "input_map: { INPUT0: sum }");
    server = await startServer({ repository: repository({ mismatched, unmapped }) });
    const r1 = await infer("mismatched", body());
    expect(r1.status).toBe(503);
    expect(r1.json.error).toContain("tensor 'A' is TYPE_FP32 at the ensemble's input but TYPE_INT32 at step 0 ('simple') input 'INPUT0'");
    const r2 = await infer("unmapped", body());
    expect(r2.json.error).toContain("step 1 ('simple'): 'simple' input 'INPUT1' is not mapped in input_map");
    const index = await (await fetch(`${server.url}/v2/repository/index`, { method: "POST" })).json();
    expect(index.find((row: { name: string }) => row.name === "unmapped").state).toBe("FAILED");
  });

  it("refuses at once an ensemble that includes itself through another, naming the loop", async () => {
    const one = TWICE.replace("model_name: simple, input_map: { INPUT0: sum", "model_name: two, input_map: { INPUT0: sum");
    const two = TWICE.replace("model_name: simple, input_map: { INPUT0: sum", "model_name: one, input_map: { INPUT0: sum");
    server = await startServer({ repository: repository({ one, two }) });
    const r = await infer("one");
    expect(r.status).toBe(503);
    expect(r.json.error).toContain("ensemble 'one' includes itself: one → two → one");
  });

  it("names the failing step and its function's error", async () => {
    const missing = TWICE.replace("model_name: simple, input_map: { INPUT0: sum", "model_name: nothing_here, input_map: { INPUT0: sum");
    server = await startServer({ repository: repository({ missing }) });
    const r = await infer("missing");
    expect(r.status).toBe(503);
    expect(r.json.error).toContain("ensemble 'missing' step 1 ('nothing_here'): Request for unknown model: 'nothing_here' is not found");
  });

  it("skips a step whose condition does not hold and answers early with what the steps before it produced (ours)", async () => {
    const maybe = `platform: ensemble
max_batch_size: 8
${TENSORS(["A", "B"], ["SUM", "TWO_A"])}
ensemble_scheduling:
  step:
    - { model_name: simple, input_map: { INPUT0: A, INPUT1: B }, output_map: { OUTPUT0: SUM, OUTPUT1: diff } }
    - { model_name: simple, condition: "param('again') == true || max(SUM) > 1000", input_map: { INPUT0: SUM, INPUT1: diff }, output_map: { OUTPUT0: TWO_A } }
`;
    server = await startServer({ repository: repository({ maybe }) });
    const once = await infer("maybe");
    expect(once.json.outputs.map((o: { name: string }) => o.name)).toEqual(["SUM"]);
    expect(once.json.outputs[0].data).toEqual(a.map((x, i) => x + b[i]!));
    const twice = await infer("maybe", JSON.stringify({ ...JSON.parse(body()), parameters: { again: true } }));
    expect(twice.json.outputs.map((o: { name: string; data: number[] }) => [o.name, o.data])).toEqual([["SUM", a.map((x, i) => x + b[i]!)], ["TWO_A", a.map((x) => 2 * x)]]);
    expect((await statsOf("simple")).inference_count).toBe(3);
  });

  it("loads its steps' functions with it in explicit mode, and answers from the response cache as a whole", async () => {
    const cached = TWICE + "response_cache: { enable: true }\n";
    server = await startServer({ repository: repository({ cached }), controlMode: "explicit", cacheSize: 1 << 20 });
    expect((await infer("simple")).status).toBe(503); // not loaded: explicit mode
    expect((await fetch(`${server.url}/v2/repository/models/cached/load`, { method: "POST" })).status).toBe(200);
    const first = await infer("cached");
    const again = await infer("cached");
    expect(again.json).toEqual(first.json);
    expect((await statsOf("simple")).inference_count).toBe(2); // the second answer came from the cache, not the steps
    const ensemble = await statsOf("cached");
    expect([ensemble.inference_stats.cache_hit.count, ensemble.inference_stats.cache_miss.count]).toEqual([1, 1]);
  });

  it("unloads its steps' functions with it on unload_dependents (Triton's), keeping those another ensemble still runs", async () => {
    // outer → twice → simple, and diamond → simple.
    const outer = `platform: ensemble
max_batch_size: 8
${TENSORS(["A", "B"], ["TWO_A"])}
ensemble_scheduling:
  step:
    - { model_name: twice, input_map: { A: A, B: B }, output_map: { TWO_A: TWO_A } }
`;
    server = await startServer({ repository: repository({ twice: TWICE, diamond: DIAMOND, outer }), controlMode: "explicit" });
    const control = (name: string, action: string, parameters?: unknown) =>
      fetch(`${server!.url}/v2/repository/models/${name}/${action}`, { method: "POST", headers: { "content-type": "application/json" }, body: parameters === undefined ? undefined : JSON.stringify({ parameters }) });
    const ready = async (name: string) => (await fetch(`${server!.url}/v2/models/${name}/ready`)).status === 200;
    for (const name of ["outer", "diamond"]) expect((await control(name, "load")).status).toBe(200);
    expect(await Promise.all(["outer", "twice", "diamond", "simple"].map(ready))).toEqual([true, true, true, true]);

    const metadata = await (await fetch(`${server.url}/v2`)).json();
    expect(metadata.extensions).toContain("model_repository(unload_dependents)");
    const answer = await control("outer", "unload", { unload_dependents: true });
    expect(await answer.json()).toEqual({ name: "outer", unload: true, unloaded: ["outer", "twice"] }); // simple: diamond runs it
    expect(await Promise.all(["outer", "twice", "diamond", "simple"].map(ready))).toEqual([false, false, true, true]);
    expect((await infer("diamond")).status).toBe(200);

    expect(await (await control("diamond", "unload", { unload_dependents: true })).json()).toEqual({ name: "diamond", unload: true, unloaded: ["diamond", "simple"] });
    expect(await ready("simple")).toBe(false);
    const wrong = await control("diamond", "unload", { unload_dependents: "yes" });
    expect([wrong.status, (await wrong.json()).error]).toEqual([400, 'parameters.unload_dependents must be true or false, not "yes"']);
  });

  it("checks its wiring again when a step's function reloads: one that no longer fits unloads and says why", async () => {
    server = await startServer({ repository: repository({ twice: TWICE }), controlMode: "explicit" });
    const load = (name: string, config?: unknown) =>
      fetch(`${server!.url}/v2/repository/models/${name}/load`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(config ? { parameters: { config: JSON.stringify(config) } } : {}) });
    expect((await load("twice")).status).toBe(200);
    expect((await load("simple")).status).toBe(200); // the same config again: twice still fits and serves
    expect((await infer("twice")).status).toBe(200);
    // simple now batches up to 4, fewer than twice's max_batch_size 8.
    expect((await load("simple", { max_batch_size: 4, dynamic_batching: {} })).status).toBe(200);
    const ready = await fetch(`${server.url}/v2/models/twice/ready`);
    expect([ready.status, (await ready.json()).error]).toEqual([503, expect.stringMatching(/^model 'twice' version 1 is not ready: step function 'simple' reloaded/)]);
    const index = await (await fetch(`${server.url}/v2/repository/index`, { method: "POST" })).json();
    expect(index.find((e: { name: string }) => e.name === "twice")).toMatchObject({
      state: "UNAVAILABLE",
      reason: "step function 'simple' reloaded and the ensemble no longer fits it: step 0 ('simple'): 'simple' batches up to 4, less than the ensemble's max_batch_size 8; step 1 ('simple'): 'simple' batches up to 4, less than the ensemble's max_batch_size 8",
    });
    expect((await load("twice")).status).toBe(400); // and loading it again says the same
  });

  it("shows as an ensemble in its config and in the function list", async () => {
    server = await startServer({ repository: repository({ twice: TWICE }) });
    const config = await (await fetch(`${server.url}/v2/models/twice/config`)).json();
    expect([config.platform, config.backend, config.ensemble_scheduling.step.length, config.instance_group]).toEqual(["ensemble", "", 2, []]);
    const list = (await (await fetch(`${server.url}/v1/functions`)).json()).functions;
    expect(list.find((f: { name: string }) => f.name === "twice").kind).toBe("ensemble");
  });
});
