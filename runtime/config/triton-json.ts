import { invalidArg } from "../core/mod.ts";
import type { FunctionConfig, TensorConfig } from "./function-config.ts";
import type { DeclaredConfig } from "./declared-config.ts";
import { fieldPath } from "./config-issue.ts";
import { CONFIG_FILE_LIMITS } from "./parse-function-config.ts";
import { functionSchema } from "./function-schema.ts";
import { toDeclared } from "./_to-declared.ts";
import { describeIssues } from "./_describe-issues.ts";
import { type LoadLimits, limitProblems } from "./load-limits.ts";

/**
 * The effective config in Triton's model-config JSON, as `GET /v2/models/{name}/config` serves it:
 * protobuf field names, every field printed including defaults, enums as strings, 64-bit integers
 * as JSON numbers. Fields tensorfn has no use for are printed at Triton's defaults so tools that
 * read them (perf_analyzer, Model Analyzer) find them. Our own `accelerator` is not printed.
 */
export function toTritonJson(config: FunctionConfig): Record<string, unknown> {
  const json: Record<string, unknown> = {
    name: config.name,
    platform: config.platform,
    backend: config.backend === "ensemble" ? "" : config.backend,
    version_policy: structuredClone(config.version_policy),
    max_batch_size: config.max_batch_size,
    input: config.input.map(inputJson),
    output: config.output.map(outputJson),
    optimization: {
      graph: { level: config.optimization.graph.level },
      ...(config.optimization.execution_accelerators && { execution_accelerators: structuredClone(config.optimization.execution_accelerators) }),
      priority: "PRIORITY_DEFAULT",
      input_pinned_memory: { enable: true },
      output_pinned_memory: { enable: true },
    },
  };
  if (config.dynamic_batching) {
    // Our target_latency_ms has no Triton field; the effective delay it tunes shows in the stats.
    const { target_latency_ms: _ours, ...triton } = config.dynamic_batching;
    json.dynamic_batching = structuredClone(triton);
  }
  if (config.sequence_batching) {
    // Triton's fields only: a state's batch axis, shared inputs and max_sequences are ours.
    const { shared_input: _s, max_sequences: _m, state, ...triton } = config.sequence_batching;
    json.sequence_batching = {
      ...structuredClone(triton),
      state: state.map(({ batch_axis: _a, ...s }) => ({ ...structuredClone(s), use_same_buffer_for_input_output: false, use_growable_memory: false })),
    };
  }
  json.instance_group = config.instance_group.map((g) => ({
    name: g.name,
    kind: g.kind,
    count: g.count,
    gpus: [...g.gpus],
    ...(g.rate_limiter ? { rate_limiter: structuredClone(g.rate_limiter) } : {}),
    secondary_devices: [],
    profile: [],
    passive: false,
    // An inline policy (function.yaml's) has no name Triton could print.
    host_policy: typeof g.host_policy === "string" ? g.host_policy : "",
  }));
  json.default_model_filename = config.default_model_filename;
  json.parameters = structuredClone(config.parameters);
  json.model_warmup = config.model_warmup.map((w) => ({ ...structuredClone(w), inputs: structuredClone(w.inputs) }));
  json.response_cache = { enable: config.response_cache?.enable ?? false };
  if (config.ensemble_scheduling) json.ensemble_scheduling = structuredClone(config.ensemble_scheduling);
  return json;
}

function inputJson(t: TensorConfig): Record<string, unknown> {
  return {
    name: t.name,
    data_type: t.data_type,
    format: t.format ?? "FORMAT_NONE",
    dims: [...t.dims],
    ...(t.reshape ? { reshape: { shape: [...t.reshape.shape] } } : {}),
    is_shape_tensor: false,
    allow_ragged_batch: false,
    optional: t.optional,
  };
}

function outputJson(t: TensorConfig): Record<string, unknown> {
  return {
    name: t.name,
    data_type: t.data_type,
    dims: [...t.dims],
    ...(t.reshape ? { reshape: { shape: [...t.reshape.shape] } } : {}),
    label_filename: t.label_filename ?? "",
    is_shape_tensor: false,
  };
}

/**
 * Reads a config in Triton's JSON form (the load-with-override API's `config` parameter) for
 * function `name`. Unknown fields are rejected, as Triton's protobuf JSON parser does; fields that
 * `toTritonJson()` prints at fixed defaults are accepted only at those defaults; 64-bit integers may
 * be numbers or decimal strings. Accepts everything `toTritonJson()` emits.
 * With `limits`, values over the server's ceilings are problems too.
 * Throws an INVALID_ARG RuntimeError listing every problem.
 */
export function parseTritonJsonConfig(json: unknown, name: string, limits?: LoadLimits): DeclaredConfig {
  const schema = functionSchema("json");
  const result = schema.safeParse(json);
  const problems = result.success
    ? []
    : describeIssues(result.error.issues, json, schema, { described: CONFIG_FILE_LIMITS.problems }).map((p) => `${fieldPath(p.path) || "config"}: ${p.problem}`);
  if (result.success && result.data.name !== undefined && result.data.name !== name) {
    problems.push(`name: '${result.data.name}' does not match the function name '${name}'`);
  }
  if (!result.success || problems.length > 0) throw invalidArg(`invalid config for function '${name}': ${listed(problems)}`);
  const config = toDeclared(result.data, name);
  const over = limits ? limitProblems(config, limits).map((p) => `${fieldPath(p.path)}: ${p.problem}`) : [];
  if (over.length > 0) throw invalidArg(`invalid config for function '${name}': ${listed(over)}`);
  return config;
}

/** The first problems (each bounded in length) joined, and how many more there are: 200 000 unknown fields must not make a 56 MB answer. */
function listed(problems: readonly string[]): string {
  const { problems: most, problemChars } = CONFIG_FILE_LIMITS;
  const shown = problems.slice(0, most).map((p) => (p.length > problemChars ? `${p.slice(0, problemChars)}…` : p));
  return problems.length > most ? `${shown.join("; ")}; and ${problems.length - most} more problem(s) not listed` : shown.join("; ");
}
