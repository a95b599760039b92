import type { PathProblem } from "./_describe-issues.ts";
import { LOAD_LIMIT_TABLE } from "./load-limit-table.mjs";
import type { LoadLimitRow } from "./load-limit-table.mjs";
import type { DeclaredConfig } from "./declared-config.ts";

/**
 * Server-wide ceilings on what a function's config may ask for, whoever wrote it (function.yaml,
 * the load API, `tensorfn check`). Each exists because the unbounded value was measured to hurt
 * the whole server: 10,000 instances, 2,000 threads, a 20-million-sample warm-up.
 */
export interface LoadLimits {
  /** Instances one version may run: instance_group counts (× GPUs), scale.min/max_instances (`--max-instances`). */
  instances: number;
  /** intra_op_thread_count and inter_op_thread_count (`--max-threads`). */
  threads: number;
  /** max_batch_size (`--max-batch-size`). */
  batchSize: number;
  /** Elements in one warm-up sample, all inputs together (`--max-warmup-elements`). */
  warmupElements: number;
  /** Runs of one warm-up sample on each instance, its `count` (`--max-warmup-runs`). */
  warmupRuns: number;
  /** Model bytes uploaded through the load API in one request (`--max-upload-size`). */
  uploadBytes: number;
  /** Model bytes held for all functions uploaded through the load API (`--max-upload-total`). */
  uploadTotalBytes: number;
  /** Functions registered through the load API with `file:` content (`--max-api-functions`). */
  apiFunctions: number;
  /** Steps one ensemble may have (`--max-ensemble-steps`). */
  ensembleSteps: number;
  /**
   * How many times its input bytes an ensemble's answer may hold (`--max-ensemble-output-ratio`;
   * never less than ENSEMBLE_OUTPUT_FLOOR): a step can fan one input out to many outputs.
   */
  ensembleOutputRatio: number;
}

/** Bytes an ensemble's answer may always hold, whatever its input's size (a small image may become large tensors). */
export const ENSEMBLE_OUTPUT_FLOOR = 64 * 1024 * 1024;

/** The table names every LoadLimits field and no other (a compile error otherwise). */
const SAME_KEYS: [keyof LoadLimits] extends [LoadLimitRow["key"]] ? ([LoadLimitRow["key"]] extends [keyof LoadLimits] ? true : never) : never = true;
void SAME_KEYS;

/** The flag that sets each ceiling, for error messages (load-limit-table.mjs). */
export const LIMIT_FLAGS = Object.fromEntries(LOAD_LIMIT_TABLE.map((row) => [row.key, row.flag])) as Record<keyof LoadLimits, string>;

/** The defaults (load-limit-table.mjs): generous for real models, small enough that one config cannot sink the host. */
export function defaultLoadLimits(cpuCount: number): LoadLimits {
  return Object.fromEntries(LOAD_LIMIT_TABLE.map((row) => [row.key, row.perCore ? Math.max(row.default, cpuCount * row.perCore) : row.default])) as unknown as LoadLimits;
}

/** Every way `config` exceeds `limits` (or gives a thread count that is not a count), with its field. */
export function limitProblems(config: DeclaredConfig, limits: LoadLimits): PathProblem[] {
  const problems: PathProblem[] = [];
  const over = (path: PropertyKey[], value: number, key: keyof LoadLimits, unit: string) =>
    problems.push({ path, problem: `${value} is over the server's ceiling of ${limits[key]}${unit ? ` ${unit}` : ""} (${LIMIT_FLAGS[key]})` });
  let instances = 0;
  config.instance_group.forEach((group, i) => {
    const n = group.count * Math.max(1, group.gpus.length);
    instances += n;
    if (n > limits.instances) over(["instance_group", i, "count"], group.count, "instances", "instances per function");
  });
  if (config.instance_group.length > 1 && instances > limits.instances) {
    over(["instance_group"], instances, "instances", "instances per function (all groups together)");
  }
  for (const key of ["min_instances", "max_instances"] as const) {
    const value = config.scale[key];
    if (value !== undefined && value > limits.instances) over(["scale", key], value, "instances", "instances per function");
  }
  for (const key of ["intra_op_thread_count", "inter_op_thread_count"]) {
    const text = config.parameters[key]?.string_value;
    if (text === undefined) continue;
    const n = Number(text);
    if (!/^[0-9]+$/.test(text.trim()) || !Number.isSafeInteger(n)) {
      problems.push({ path: ["parameters", key], problem: `${JSON.stringify(text.slice(0, 32))} is not a thread count (an integer ≥ 0; 0 = onnxruntime's default)` });
    } else if (n > limits.threads) {
      over(["parameters", key], n, "threads", "threads");
    }
  }
  if (config.max_batch_size !== undefined && config.max_batch_size > limits.batchSize) {
    over(["max_batch_size"], config.max_batch_size, "batchSize", "");
  }
  const steps = config.ensemble_scheduling?.step.length ?? 0;
  if (steps > limits.ensembleSteps) over(["ensemble_scheduling", "step"], steps, "ensembleSteps", "steps per ensemble");
  config.model_warmup.forEach((sample, i) => {
    const batch = config.max_batch_size === 0 ? 1 : sample.batch_size;
    const elements = Object.values(sample.inputs).reduce((sum, input) => sum + batch * input.dims.reduce((a, d) => a * Math.max(1, d), 1), 0);
    if (elements > limits.warmupElements) {
      problems.push({
        path: ["model_warmup", i, "batch_size"],
        problem: `${sample.batch_size} makes a sample of ${elements} elements, over the server's ceiling of ${limits.warmupElements} elements per warm-up sample (${LIMIT_FLAGS.warmupElements})`,
      });
    }
    if (sample.count > limits.warmupRuns) over(["model_warmup", i, "count"], sample.count, "warmupRuns", "runs per warm-up sample");
  });
  return problems;
}
