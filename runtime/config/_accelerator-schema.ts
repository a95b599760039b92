// Triton's `optimization.execution_accelerators` for ONNX Runtime: its schema, the parameters each
// accelerator takes (Triton's onnxruntime backend's names), and what they mean for onnxruntime.
import * as z from "zod";
import { modelPathProblem } from "./model-path.ts";
import type { Accelerator, ExecutionAccelerators } from "./function-config.ts";

const BOOLEAN = /^(true|false|1|0)$/;
const POSITIVE = /^[1-9][0-9]{0,17}$/;

/** Each GPU accelerator's parameters: a check of its value (undefined: fine), and the onnxruntime provider option it becomes. */
const PARAMETERS: Record<"tensorrt" | "cuda", Record<string, { problem(v: string): string | undefined; ort(v: string): [string, string][] }>> = {
  tensorrt: {
    precision_mode: {
      problem: (v) => (/^(FP32|FP16|INT8)$/.test(v) ? undefined : `${JSON.stringify(v)} is not FP32, FP16 or INT8`),
      ort: (v) => [["trt_fp16_enable", v === "FP32" ? "0" : "1"], ["trt_int8_enable", v === "INT8" ? "1" : "0"]],
    },
    max_workspace_size_bytes: { problem: positive, ort: (v) => [["trt_max_workspace_size", v]] },
    trt_engine_cache_enable: { problem: boolean, ort: (v) => [["trt_engine_cache_enable", flag(v)]] },
    // Relative to the function's folder, which it must stay inside (resolved at load).
    trt_engine_cache_path: { problem: (v) => modelPathProblem(v)?.replace("the version folder", "the function's folder"), ort: (v) => [["trt_engine_cache_path", v]] },
    trt_timing_cache_enable: { problem: boolean, ort: (v) => [["trt_timing_cache_enable", flag(v)]] },
    trt_max_partition_iterations: { problem: positive, ort: (v) => [["trt_max_partition_iterations", v]] },
    trt_min_subgraph_size: { problem: positive, ort: (v) => [["trt_min_subgraph_size", v]] },
  },
  cuda: {
    gpu_mem_limit: { problem: positive, ort: (v) => [["gpu_mem_limit", v]] },
    arena_extend_strategy: {
      problem: (v) => (/^(0|1|kNextPowerOfTwo|kSameAsRequested)$/.test(v) ? undefined : `${JSON.stringify(v)} is not kNextPowerOfTwo (0) or kSameAsRequested (1)`),
      ort: (v) => [["arena_extend_strategy", v === "1" || v === "kSameAsRequested" ? "kSameAsRequested" : "kNextPowerOfTwo"]],
    },
    enable_cuda_graph: { problem: boolean, ort: (v) => [["enable_cuda_graph", flag(v)]] },
    cudnn_conv_algo_search: {
      problem: (v) => (/^(EXHAUSTIVE|HEURISTIC|DEFAULT|0|1|2)$/.test(v) ? undefined : `${JSON.stringify(v)} is not EXHAUSTIVE (0), HEURISTIC (1) or DEFAULT (2)`),
      ort: (v) => [["cudnn_conv_algo_search", ({ "0": "EXHAUSTIVE", "1": "HEURISTIC", "2": "DEFAULT" } as Record<string, string>)[v] ?? v]],
    },
    cudnn_conv_use_max_workspace: { problem: boolean, ort: (v) => [["cudnn_conv_use_max_workspace", flag(v)]] },
    do_copy_in_default_stream: { problem: boolean, ort: (v) => [["do_copy_in_default_stream", flag(v)]] },
    use_tf32: { problem: boolean, ort: (v) => [["use_tf32", flag(v)]] },
  },
};

function positive(v: string): string | undefined {
  return POSITIVE.test(v) ? undefined : `${JSON.stringify(v)} is not a positive whole number`;
}
function boolean(v: string): string | undefined {
  return BOOLEAN.test(v) ? undefined : `${JSON.stringify(v)} is not true, false, 1 or 0`;
}
function flag(v: string): string {
  return v === "true" || v === "1" ? "1" : "0";
}

/** A parameter value as Triton writes them (strings); function.yaml may give a number or a boolean. */
const value = z.preprocess((v) => (typeof v === "number" || typeof v === "boolean" ? String(v) : v), z.string().max(4096));

function accelerator(kind: "gpu" | "cpu") {
  return z
    .strictObject({ name: z.string(), parameters: z.record(z.string(), value).default({}) })
    .superRefine((a, ctx) => {
      const known = kind === "gpu" ? PARAMETERS[a.name as "tensorrt" | "cuda"] : undefined;
      if (!known) {
        const message =
          kind === "gpu"
            ? `${JSON.stringify(a.name)} is not an onnxruntime GPU accelerator here: use "tensorrt" or "cuda"`
            : `${JSON.stringify(a.name)} is not available: onnxruntime-node's builds have no CPU accelerator (openvino, dnnl); leave cpu_execution_accelerator out`;
        ctx.addIssue({ code: "custom", path: ["name"], message });
        return;
      }
      for (const [key, v] of Object.entries(a.parameters)) {
        const parameter = known[key];
        const problem = parameter ? parameter.problem(v) : `unknown parameter for ${a.name}; known: ${Object.keys(known).join(", ")}`;
        if (problem) ctx.addIssue({ code: "custom", path: ["parameters", key], message: problem });
      }
    });
}

/** `optimization.execution_accelerators`, in function.yaml, config.pbtxt and Triton's JSON alike. */
export function executionAcceleratorsSchema() {
  return z
    .strictObject({
      gpu_execution_accelerator: accelerator("gpu").array().max(2).default([]),
      cpu_execution_accelerator: accelerator("cpu").array().max(2).default([]),
    })
    .superRefine((x, ctx) => {
      const names = x.gpu_execution_accelerator.map((a) => a.name);
      names.forEach((name, i) => {
        if (names.indexOf(name) !== i) ctx.addIssue({ code: "custom", path: ["gpu_execution_accelerator", i, "name"], message: `${JSON.stringify(name)} is listed twice` });
      });
    });
}

/**
 * The accelerator Triton's list asks for, in its priority order: TensorRT first means TensorRT
 * (then CUDA, then the CPU, as onnxruntime falls back); CUDA alone, CUDA. Undefined without one.
 */
export function tritonAccelerator(x: ExecutionAccelerators | undefined): Accelerator | undefined {
  const first = x?.gpu_execution_accelerator[0]?.name;
  return first === "tensorrt" || first === "cuda" ? first : undefined;
}

/**
 * onnxruntime's provider options for each GPU provider from the accelerators' parameters, under
 * onnxruntime's own keys (`precision_mode: FP16` → `trt_fp16_enable: "1"`). `folder` resolves the
 * engine cache path (the function's folder, absolute).
 */
export function providerOptions(x: ExecutionAccelerators | undefined, folder?: string): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const a of x?.gpu_execution_accelerator ?? []) {
    const known = PARAMETERS[a.name as "tensorrt" | "cuda"];
    if (!known) continue;
    const options: Record<string, string> = {};
    for (const [key, v] of Object.entries(a.parameters)) {
      for (const [ortKey, ortValue] of known[key]?.ort(v) ?? []) options[ortKey] = ortKey === "trt_engine_cache_path" && folder ? `${folder}/${ortValue}` : ortValue;
    }
    out[a.name] = options;
  }
  return out;
}
