import { afterEach, describe, expect, it } from "vitest";
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** `simple` (the real ONNX model) with the response cache on; `simple_uncached` beside it without. */
function repository(): string {
  const repo = tempRepository("simple");
  appendFileSync(join(repo, "simple", "function.yaml"), "response_cache: { enable: true }\n");
  return repo;
}

const json = (a: number, b = 1) =>
  JSON.stringify({
    inputs: [
      { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: Array(16).fill(a) },
      { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: Array(16).fill(b) },
    ],
  });

function binary(a: number): { body: Uint8Array; headers: Record<string, string> } {
  const header = new TextEncoder().encode(
    JSON.stringify({
      inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], parameters: { binary_data_size: 64 } })),
      parameters: { binary_data_output: true },
    }),
  );
  const body = new Uint8Array(header.byteLength + 128);
  body.set(header);
  body.set(new Uint8Array(new Int32Array(16).fill(a).buffer), header.byteLength);
  body.set(new Uint8Array(new Int32Array(16).fill(1).buffer), header.byteLength + 64);
  return { body, headers: { "inference-header-content-length": String(header.byteLength), "content-type": "application/octet-stream" } };
}

async function infer(body: BodyInit, headers: Record<string, string> = {}): Promise<{ status: number; bytes: Uint8Array }> {
  const response = await fetch(`${server!.url}/v2/models/simple/infer`, { method: "POST", body, headers });
  return { status: response.status, bytes: new Uint8Array(await response.arrayBuffer()) };
}

async function stats() {
  const s = (await (await fetch(`${server!.url}/v2/models/simple/stats`)).json()).model_stats[0];
  return { hits: s.inference_stats.cache_hit.count, misses: s.inference_stats.cache_miss.count, executions: s.execution_count, inferences: s.inference_count, success: s.inference_stats.success.count };
}

describe("response_cache", () => {
  it("answers a repeated request from the cache, byte for byte, without running the model; a different input never hits", async () => {
    server = await startServer({ repository: repository(), cacheSize: 1 << 20 });
    const first = await infer(json(5));
    const again = await infer(json(5));
    expect(first.status).toBe(200);
    expect(again.bytes).toEqual(first.bytes);
    expect(JSON.parse(new TextDecoder().decode(first.bytes)).outputs[0].data).toEqual(Array(16).fill(6));
    expect(await stats()).toEqual({ hits: 1, misses: 1, executions: 1, inferences: 1, success: 2 });

    const other = await infer(json(5, 2)); // INPUT1 differs in every element
    expect(JSON.parse(new TextDecoder().decode(other.bytes)).outputs[0].data).toEqual(Array(16).fill(7));
    // Binary tensors carry the same values: the key is the tensors, not the encoding, and the answer comes back binary.
    const { body, headers } = binary(5);
    const viaBinary = await fetch(`${server!.url}/v2/models/simple/infer`, { method: "POST", body: body as BodyInit, headers });
    expect(viaBinary.headers.get("inference-header-content-length")).not.toBeNull();
    await viaBinary.arrayBuffer();
    expect(await stats()).toEqual({ hits: 2, misses: 2, executions: 2, inferences: 2, success: 4 });
  });

  it("answers the same bytes again with the reply as it was sent; other bytes of the same tensors (another id) hit the outputs, never that reply", async () => {
    server = await startServer({ repository: repository(), cacheSize: 1 << 20 });
    const withId = (id: string) => JSON.stringify({ id, ...JSON.parse(json(4)) });
    const first = await infer(withId("a"));
    const same = await infer(withId("a"));
    const other = await infer(withId("b"));
    expect(same.bytes).toEqual(first.bytes);
    const decoded = (r: { bytes: Uint8Array }) => JSON.parse(new TextDecoder().decode(r.bytes));
    expect([decoded(first).id, decoded(same).id, decoded(other).id]).toEqual(["a", "a", "b"]);
    expect(decoded(other).outputs).toEqual(decoded(first).outputs);
    expect(await stats()).toEqual({ hits: 2, misses: 1, executions: 1, inferences: 1, success: 3 });
    // Binary: the same bytes with the same framing header get the same binary reply and its header.
    const { body, headers } = binary(4);
    const replies = [];
    for (let i = 0; i < 2; i++) {
      const r = await fetch(`${server!.url}/v2/models/simple/infer`, { method: "POST", body: body as BodyInit, headers });
      replies.push({ header: r.headers.get("inference-header-content-length"), bytes: new Uint8Array(await r.arrayBuffer()) });
    }
    expect(replies[1]).toEqual(replies[0]);
    expect(replies[0]!.header).not.toBeNull();
    expect(await stats()).toMatchObject({ hits: 4, executions: 1 });
  });

  it("keeps every output of a cached answer, so a request for another output of the same inputs hits it correctly", async () => {
    server = await startServer({ repository: repository(), cacheSize: 1 << 20 });
    const only = (name: string) => JSON.stringify({ ...JSON.parse(json(9, 4)), outputs: [{ name }] });
    const decoded = (r: { bytes: Uint8Array }) => JSON.parse(new TextDecoder().decode(r.bytes)).outputs;
    const sum = decoded(await infer(only("OUTPUT0")));
    const difference = decoded(await infer(only("OUTPUT1")));
    expect(sum.map((o: { name: string }) => o.name)).toEqual(["OUTPUT0"]);
    expect(sum[0].data).toEqual(Array(16).fill(13));
    expect(difference.map((o: { name: string }) => o.name)).toEqual(["OUTPUT1"]);
    expect(difference[0].data).toEqual(Array(16).fill(5));
    expect(await stats()).toMatchObject({ hits: 1, misses: 1, executions: 1 });
  });

  it("counts in Triton's cache metric families, and the cache's own size", async () => {
    server = await startServer({ repository: repository(), cacheSize: 1 << 20 });
    await infer(json(1));
    await infer(json(1));
    const text = await (await fetch(`${server!.url}/metrics`)).text();
    expect(text).toMatch(/^nv_cache_num_hits_per_model\{model="simple",version="1"\} 1$/m);
    expect(text).toMatch(/^nv_cache_num_misses_per_model\{model="simple",version="1"\} 1$/m);
    expect(text).toMatch(/^nv_cache_hit_duration_per_model\{model="simple",version="1"\} \d+$/m);
    expect(text).toMatch(/^tensorfn_cache_entries 2$/m); // the outputs, and the encoded reply to those exact bytes
    expect(text).toMatch(/^tensorfn_cache_capacity_bytes 1048576$/m);
    // Only versions that use the cache have the per-model families.
    expect(text).not.toMatch(/^nv_cache_num_hits_per_model\{model="mlp"/m);
  });

  it("forgets a function's answers when it is loaded again (new content may answer differently)", async () => {
    const repo = repository();
    server = await startServer({ repository: repo, cacheSize: 1 << 20, controlMode: "explicit", loadModels: ["simple"] });
    await infer(json(3));
    const load = await fetch(`${server!.url}/v2/repository/models/simple/load`, { method: "POST" });
    expect(load.status).toBe(200);
    await infer(json(3));
    const s = await stats();
    expect(s.hits).toBe(0);
    expect(s.misses).toBe(2);
  });

  it("without --cache-size, a function that enables it answers normally, uncached", async () => {
    server = await startServer({ repository: repository() });
    await infer(json(2));
    await infer(json(2));
    expect(await stats()).toMatchObject({ hits: 0, misses: 0, executions: 2 });
  });

  it("does not cache a failed answer", async () => {
    const repo = repository();
    writeFileSync(join(repo, "simple", "function.yaml"), "max_batch_size: 8\nresponse_cache: { enable: true }\n");
    server = await startServer({ repository: repo, cacheSize: 1 << 20 });
    const bad = JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 16], data: Array(16).fill(1) }] }); // INPUT1 missing
    expect((await infer(bad)).status).toBe(400);
    expect((await infer(bad)).status).toBe(400);
    expect(await stats()).toMatchObject({ hits: 0 });
  });

  it("keys an ensemble's answers by every parameter its conditions may read: priority 0 never gets the answer computed for priority 1", async () => {
    const repo = tempRepository("simple_identity");
    mkdirSync(join(repo, "gated", "1"), { recursive: true });
    writeFileSync(
      join(repo, "gated", "function.yaml"),
      [
        "platform: ensemble",
        "max_batch_size: 0",
        "response_cache: { enable: true }",
        "input: [{ name: IN, data_type: TYPE_STRING, dims: [-1, -1] }]",
        "output: [{ name: X, data_type: TYPE_STRING, dims: [-1, -1] }, { name: Y, data_type: TYPE_STRING, dims: [-1, -1] }]",
        "ensemble_scheduling:",
        "  step:",
        "    - { model_name: simple_identity, model_version: -1, input_map: { INPUT0: IN }, output_map: { OUTPUT0: X } }",
        "    - { model_name: simple_identity, model_version: -1, input_map: { INPUT0: IN }, output_map: { OUTPUT0: Y }, condition: \"param('priority') == 1\" }",
      ].join("\n"),
    );
    server = await startServer({ repository: repo, cacheSize: 1 << 20 });
    const ask = async (parameters: Record<string, unknown>) => {
      const body = JSON.stringify({ inputs: [{ name: "IN", datatype: "BYTES", shape: [1, 1], data: ["hello"] }], parameters });
      const response = await fetch(`${server!.url}/v2/models/gated/infer`, { method: "POST", body, headers: { "content-type": "application/json" } });
      const answer = await response.json();
      expect(response.status, JSON.stringify(answer)).toBe(200);
      return (answer.outputs as { name: string }[]).map((o) => o.name).sort();
    };
    expect(await ask({ priority: 1 })).toEqual(["X", "Y"]);
    expect(await ask({ priority: 0 })).toEqual(["X"]);
    expect(await ask({ priority: 1, timeout: 5_000_000 })).toEqual(["X", "Y"]);
    expect(await ask({ priority: 1 })).toEqual(["X", "Y"]);
  });
});
