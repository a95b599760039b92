import { describe, expect, it } from "vitest";
import { formatIssue, parsePbtxtConfig, providerOptions, tritonAccelerator } from "../../../runtime/config/mod.ts";
import { declared, issuesOf } from "./_helpers.ts";

// Triton's optimization.execution_accelerators, in function.yaml and config.pbtxt alike.

const TENSORRT_YAML = `optimization:
  execution_accelerators:
    gpu_execution_accelerator:
      - name: tensorrt
        parameters:
          precision_mode: FP16
          max_workspace_size_bytes: 1073741824
          trt_engine_cache_enable: true
          trt_engine_cache_path: trt-cache
      - name: cuda
        parameters: { gpu_mem_limit: "2147483648", arena_extend_strategy: kSameAsRequested, enable_cuda_graph: 1, cudnn_conv_algo_search: HEURISTIC }
`;

describe("execution_accelerators", () => {
  it("reads Triton's form from function.yaml (values as strings) and asks for its first accelerator", () => {
    const x = declared(TENSORRT_YAML).optimization.execution_accelerators!;
    expect(x.gpu_execution_accelerator[0]).toEqual({ name: "tensorrt", parameters: { precision_mode: "FP16", max_workspace_size_bytes: "1073741824", trt_engine_cache_enable: "true", trt_engine_cache_path: "trt-cache" } });
    expect(tritonAccelerator(x)).toBe("tensorrt");
    expect(tritonAccelerator(declared("optimization: { execution_accelerators: { gpu_execution_accelerator: [{ name: cuda }] } }").optimization.execution_accelerators)).toBe("cuda");
    expect(tritonAccelerator(undefined)).toBeUndefined();
  });

  it("becomes onnxruntime's provider options under onnxruntime's keys, the engine cache inside the function's folder", () => {
    expect(providerOptions(declared(TENSORRT_YAML).optimization.execution_accelerators, "/srv/repo/simple")).toEqual({
      tensorrt: { trt_fp16_enable: "1", trt_int8_enable: "0", trt_max_workspace_size: "1073741824", trt_engine_cache_enable: "1", trt_engine_cache_path: "/srv/repo/simple/trt-cache" },
      cuda: { gpu_mem_limit: "2147483648", arena_extend_strategy: "kSameAsRequested", enable_cuda_graph: "1", cudnn_conv_algo_search: "HEURISTIC" },
    });
  });

  it("reads config.pbtxt's form", () => {
    const text = `optimization { execution_accelerators {
  gpu_execution_accelerator : [ {
    name : "tensorrt"
    parameters { key: "precision_mode" value: "FP16" }
    parameters { key: "max_workspace_size_bytes" value: "1073741824" } } ] } }`;
    const result = parsePbtxtConfig(text, { file: "fn/config.pbtxt", name: "fn" });
    expect(result.errors.map(formatIssue)).toEqual([]);
    expect(result.ignored).toEqual([]);
    expect(result.config!.optimization.execution_accelerators!.gpu_execution_accelerator[0]!.parameters.precision_mode).toBe("FP16");
  });

  it("refuses what onnxruntime cannot take, naming the file, the line and the field", () => {
    const bad = (parameters: string) => issuesOf(`optimization:\n  execution_accelerators:\n    gpu_execution_accelerator:\n      - name: tensorrt\n        parameters: { ${parameters} }\n`);
    expect(bad("precision_mode: FP8")).toEqual(['functions/simple/function.yaml:5: optimization.execution_accelerators.gpu_execution_accelerator[0].parameters.precision_mode: "FP8" is not FP32, FP16 or INT8']);
    expect(bad("max_workspace_size_bytes: -1")[0]).toMatch(/parameters\.max_workspace_size_bytes: "-1" is not a positive whole number/);
    expect(bad("trt_engine_cache_path: ../../etc")[0]).toMatch(/parameters\.trt_engine_cache_path: "\.\.\/\.\.\/etc" leaves or skips a folder/);
    expect(bad("trt_engine_cache_path: /tmp/x")[0]).toMatch(/is absolute; name a file inside the function's folder/);
    expect(bad("gpu_mem_limit: 5")[0]).toMatch(/parameters\.gpu_mem_limit: unknown parameter for tensorrt; known: precision_mode, /);
    expect(issuesOf("optimization: { execution_accelerators: { gpu_execution_accelerator: [{ name: cuda, parameters: { arena_extend_strategy: 7, enable_cuda_graph: yes } }] } }")).toEqual([
      'functions/simple/function.yaml:1: optimization.execution_accelerators.gpu_execution_accelerator[0].parameters.arena_extend_strategy: "7" is not kNextPowerOfTwo (0) or kSameAsRequested (1)',
      'functions/simple/function.yaml:1: optimization.execution_accelerators.gpu_execution_accelerator[0].parameters.enable_cuda_graph: "yes" is not true, false, 1 or 0',
    ]);
    expect(issuesOf("optimization: { execution_accelerators: { gpu_execution_accelerator: [{ name: rocm }] } }")[0]).toMatch(/gpu_execution_accelerator\[0\]\.name: "rocm" is not an onnxruntime GPU accelerator here: use "tensorrt" or "cuda"/);
    expect(issuesOf("optimization: { execution_accelerators: { cpu_execution_accelerator: [{ name: openvino }] } }")[0]).toMatch(/cpu_execution_accelerator\[0\]\.name: "openvino" is not available/);
    expect(issuesOf("optimization: { execution_accelerators: { gpu_execution_accelerator: [{ name: cuda }, { name: cuda }] } }")[0]).toMatch(/gpu_execution_accelerator\[1\]\.name: "cuda" is listed twice/);
    const pbtxt = parsePbtxtConfig(`optimization {\n  execution_accelerators {\n    gpu_execution_accelerator : [ { name : "tensorrt"\n      parameters { key: "precision_mode" value: "FP64" } } ] } }`, { file: "fn/config.pbtxt", name: "fn" });
    expect(pbtxt.errors.map(formatIssue)[0]).toMatch(/^fn\/config\.pbtxt:\d+: optimization\.execution_accelerators\.gpu_execution_accelerator\[0\]\.parameters\.precision_mode: "FP64" is not FP32, FP16 or INT8$/);
  });
});
