import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cpSync, renameSync, writeFileSync } from "node:fs";
import { mlpReference } from "../../models/mlp.ts";
import { join } from "node:path";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

let server: TestServer;
beforeAll(async () => {
  const repo = tempRepository("simple", "mlp");
  // `contradicts`: the simple model with a config that disagrees with it about INPUT0's type.
  const contradicts = tempRepository("simple");
  const text = "max_batch_size: 8\ninput:\n  - { name: INPUT0, data_type: TYPE_FP32, dims: [16] }\n  - { name: INPUT1, data_type: TYPE_INT32, dims: [16] }\n";
  writeFileSync(join(contradicts, "simple", "function.yaml"), text);
  renameSync(join(contradicts, "simple"), join(repo, "contradicts"));
  // mlp asks for CUDA, which this CPU-only install lacks; the rest of its config comes from the model.
  writeFileSync(join(repo, "mlp", "function.yaml"), "accelerator: cuda\n");
  // mlp_wasm: the same model on onnxruntime-web's WebAssembly build.
  cpSync(join(repo, "mlp"), join(repo, "mlp_wasm"), { recursive: true });
  writeFileSync(join(repo, "mlp_wasm", "function.yaml"), "accelerator: wasm\n");
  // Triton's "none" mode: everything loads at start, so a bad function is FAILED before any request.
  server = await startServer({ repository: repo, controlMode: "none" });
});
afterAll(() => server.close());

describe("loading", () => {
  it("completes an omitted config from the model (inputs, outputs, max_batch_size and batching)", async () => {
    const config = await (await fetch(`${server.url}/v2/models/mlp/config`)).json();
    expect(config).toMatchObject({
      max_batch_size: 4,
      dynamic_batching: { max_queue_delay_microseconds: 0 },
      input: [{ name: "input", data_type: "TYPE_FP32", dims: [512] }],
      output: [{ name: "probabilities", data_type: "TYPE_FP32", dims: [10] }],
    });
  });

  it("falls back from CUDA to the CPU and says so in the effective config", async () => {
    const { parameters } = await (await fetch(`${server.url}/v2/models/mlp/config`)).json();
    expect(parameters.execution_provider.string_value).toBe("cpu");
    expect(parameters.execution_provider_fallback.string_value).toMatch(/cuda/);
  });

  it("serves `accelerator: wasm` on onnxruntime-web, agreeing with the reference", async () => {
    const { parameters } = await (await fetch(`${server.url}/v2/models/mlp_wasm/config`)).json();
    expect(parameters.execution_provider.string_value).toBe("wasm");
    const x = Array.from({ length: 512 }, (_, i) => Math.sin(i));
    const res = await fetch(`${server.url}/v2/models/mlp_wasm/infer`, {
      method: "POST",
      body: JSON.stringify({ inputs: [{ name: "input", datatype: "FP32", shape: [1, 512], data: x }] }),
    });
    const expected = mlpReference(Float32Array.from(x), 1);
    const { data } = (await res.json()).outputs[0];
    expect(data).toHaveLength(10);
    data.forEach((v: number, i: number) => expect(v).toBeCloseTo(expected[i]!, 5));
  });

  it("refuses a config that contradicts its model, naming both sides, while the others serve", async () => {
    const ready = await fetch(`${server.url}/v2/models/contradicts/ready`);
    expect(ready.status).toBe(503);
    const { error } = await ready.json();
    expect(error).toMatch(/INPUT0/);
    expect(error).toMatch(/TYPE_FP32/);
    expect(error).toMatch(/TYPE_INT32/);
    expect((await fetch(`${server.url}/v2/models/simple/ready`)).status).toBe(200);
    expect((await fetch(`${server.url}/v2/health/ready`)).status).toBe(503);
  });
});
