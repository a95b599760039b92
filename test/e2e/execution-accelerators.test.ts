import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { startServer, TARGET_RUNTIME } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

// Triton's execution accelerators through the real server and onnxruntime-node on a host without
// CUDA: the function asks for TensorRT in FP16, falls back to the CPU, answers, and /config says
// what it asked for, what runs, and why its options were not applied.

describe(`execution_accelerators (${TARGET_RUNTIME})`, () => {
  let server: TestServer;
  beforeAll(async () => {
    const repository = tempRepository("simple");
    appendFileSync(
      join(repository, "simple", "function.yaml"),
      "optimization:\n  execution_accelerators:\n    gpu_execution_accelerator:\n      - name: tensorrt\n        parameters: { precision_mode: FP16, max_workspace_size_bytes: 1073741824 }\n",
    );
    server = await startServer({ repository });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("falls back to the CPU, serves, and /config shows the accelerators, the provider in effect and why", async () => {
    const body = JSON.stringify({ inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: Array(16).fill(2) })) });
    const infer = await fetch(`${server.url}/v2/models/simple/infer`, { method: "POST", body });
    expect(infer.status).toBe(200);
    const config = (await (await fetch(`${server.url}/v2/models/simple/config`)).json()) as {
      optimization: { execution_accelerators: { gpu_execution_accelerator: { name: string; parameters: Record<string, string> }[] } };
      parameters: Record<string, { string_value: string }>;
    };
    expect(config.optimization.execution_accelerators.gpu_execution_accelerator).toEqual([{ name: "tensorrt", parameters: { precision_mode: "FP16", max_workspace_size_bytes: "1073741824" } }]);
    expect(config.parameters.execution_provider!.string_value).toBe("cpu");
    expect(config.parameters.execution_provider_fallback!.string_value).toMatch(/tensorrt execution provider unavailable/);
    expect(config.parameters.execution_provider_options_not_applied!.string_value).toBe("tensorrt {trt_fp16_enable=1, trt_int8_enable=0, trt_max_workspace_size=1073741824}: the session runs on cpu");
  });
});
