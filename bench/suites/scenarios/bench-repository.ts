import { copyFileSync, cpSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** One function of the benchmark repository: a copy of an example function under its own config. */
export interface BenchFunction {
  name: string;
  /** The example function under functions/ whose model (or whole folder) it copies. */
  from: string;
  /** The function.yaml to write; `undefined` copies the example folder as it is. */
  yaml?: string;
}

/**
 * Writes a throwaway repository under the system temp folder: each function gets `from`'s
 * `1/model.onnx` and its own `function.yaml` (or the whole example folder when `yaml` is absent).
 */
export function writeBenchRepository(functionsDir: string, functions: BenchFunction[]): string {
  const dir = mkdtempSync(join(tmpdir(), "tensorfn-bench-"));
  for (const fn of functions) {
    const target = join(dir, fn.name);
    if (fn.yaml === undefined) {
      cpSync(join(functionsDir, fn.from), target, { recursive: true });
      continue;
    }
    mkdirSync(join(target, "1"), { recursive: true });
    copyFileSync(join(functionsDir, fn.from, "1", "model.onnx"), join(target, "1", "model.onnx"));
    writeFileSync(join(target, "function.yaml"), fn.yaml);
  }
  return dir;
}

/** The function.yaml of a batch-64 model: dynamic batching with `batching` settings, or none. */
export function batchingYaml(batching: { delayUs: number; preferred?: number[]; targetLatencyMs?: number } | undefined, extra = ""): string {
  const lines = ["max_batch_size: 64", extra];
  if (batching) {
    lines.push("dynamic_batching:", `  max_queue_delay_microseconds: ${batching.delayUs}`);
    if (batching.preferred) lines.push(`  preferred_batch_size: [${batching.preferred.join(", ")}]`);
    if (batching.targetLatencyMs !== undefined) lines.push(`  target_latency_ms: ${batching.targetLatencyMs}`);
  }
  return lines.filter((line) => line !== "").join("\n") + "\n";
}

/** resnet's inputs and outputs, as functions/resnet/function.yaml declares them. */
export const RESNET_TENSORS = [
  "input:",
  "  - { name: input, data_type: TYPE_FP32, dims: [3, 224, 224] }",
  "output:",
  "  - { name: logits, data_type: TYPE_FP32, dims: [1000] }",
].join("\n");
