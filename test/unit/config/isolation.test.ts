import { describe, expect, it } from "vitest";
import { declared, issuesOf } from "./_helpers.ts";

describe("isolation", () => {
  it("is shared unless the function asks for a process, with a memory cap and an environment", () => {
    expect(declared("").isolation).toBeUndefined();
    expect(declared("isolation: shared").isolation).toBeUndefined();
    expect(declared("isolation: process").isolation).toEqual({ mode: "process", env: {} });
    expect(declared("isolation: { mode: process, max_memory: 1.5G, env: { CUDA_VISIBLE_DEVICES: MIG-4f1c, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE: 50 } }").isolation).toEqual({
      mode: "process",
      max_memory: 1.5 * 2 ** 30,
      env: { CUDA_VISIBLE_DEVICES: "MIG-4f1c", CUDA_MPS_ACTIVE_THREAD_PERCENTAGE: "50" },
    });
    expect(declared("isolation: { mode: process, max_memory: 268435456 }").isolation!.max_memory).toBe(268435456);
  });

  it("refuses bad values and what a process does not run yet, naming the file, the line and the field", () => {
    expect(issuesOf("isolation: thread")).toEqual(['functions/simple/function.yaml:1: isolation.mode: "thread" is not shared or process']);
    expect(issuesOf("isolation: { mode: process, max_memory: 10M }")).toEqual(['functions/simple/function.yaml:1: isolation.max_memory: "10M" is not a size of at least 64M (bytes, or with a k/M/G/T suffix)']);
    expect(issuesOf("isolation:\n  mode: process\n  env: { 'BAD-NAME': x }\n")[0]).toMatch(/^functions\/simple\/function\.yaml:3: isolation\.env\.BAD-NAME: is not an environment variable's name/);
    expect(issuesOf("isolation: { mode: shared, max_memory: 1G }")).toEqual(["functions/simple/function.yaml:1: isolation.max_memory: applies to isolation mode process only"]);
    expect(issuesOf("isolation: process\ngeneration: {}\n")[0]).toMatch(/:2: generation: isolation: process does not run generators/);
    expect(issuesOf("isolation: process\nhandler: h.ts\n")[0]).toMatch(/:2: handler: isolation: process does not run preprocess\/postprocess around a model/);
    expect(issuesOf("isolation: process\naccelerator: webgpu\n")[0]).toMatch(/:2: accelerator: isolation: process does not run onnxruntime-web/);
    expect(issuesOf("isolation: process\nbackend: identity\ninput: [{ name: X, data_type: TYPE_FP32, dims: [1] }]\noutput: [{ name: X, data_type: TYPE_FP32, dims: [1] }]\n")[0]).toMatch(/backend: isolation: process does not run the identity backend/);
  });
});
