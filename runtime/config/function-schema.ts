// Over 400 lines: one zod schema per section of function.yaml (Triton's model configuration has that many
// fields, each with its own rules and messages); they read best together, as one description of the file.
import * as z from "zod";
import type { Accelerator, DynamicBatching, ExecutionAccelerators, FunctionConfig, InstanceGroup, InstanceRateLimiter, RateLimitConfig, ScaleConfig, SequenceBatching, TritonDataType } from "./function-config.ts";
import { CONFIG_DATA_TYPES } from "../tensor/mod.ts";
import { ensembleProblems } from "./_ensemble-rules.ts";
import { identityProblems } from "./_identity-rules.ts";
import { formatDims, knownElementCount } from "./_dims.ts";
import { MAX_VERSION } from "./function-name.ts";
import { modelPathProblem } from "./model-path.ts";
import { dims, message, onlyDefault, protoInt } from "./_schema-fields.ts";
import type { Dialect } from "./_schema-fields.ts";
import { DEFAULT_MAX_SEQUENCES, sequenceBatchingSchema, sequenceProblems } from "./_sequence-schema.ts";
import { executionAcceleratorsSchema } from "./_accelerator-schema.ts";
import { hasHostPolicy, isolationProblems, isolationSchema } from "./_isolation-schema.ts";
import { embeddingProblems, embeddingSchema, generationProblems, generationSchema } from "./_generation-schema.ts";
import type { GenerationConfig } from "./_generation-schema.ts";

export type { Dialect } from "./_schema-fields.ts";
export { DEFAULT_MAX_SEQUENCES };


export const INSTANCE_KINDS = ["KIND_AUTO", "KIND_GPU", "KIND_CPU", "KIND_MODEL"] as const satisfies readonly InstanceGroup["kind"][];

export const ACCELERATORS = ["auto", "cpu", "cuda", "tensorrt", "webgpu", "wasm"] as const satisfies readonly Accelerator[];

/** `platform` values read as ONNX Runtime; both normalise to "onnxruntime_onnx". */
const ONNX_PLATFORMS = ["onnxruntime_onnx", "onnxruntime"] as const;

/**
 * `backend` values: ONNX Runtime; Triton's built-in test backend that returns its inputs; ours,
 * `handler`: no model, the function's TypeScript handler computes the answers (as Triton's Python backend).
 */
export const BACKENDS = ["onnxruntime", "identity", "handler"] as const;

/** Default `handler_timeout_ms`: a handler call that takes longer is cut off with 504. */
export const DEFAULT_HANDLER_TIMEOUT_MS = 30_000;

/** The largest file a handler reads from its folder (`ctx.readFile`): a model's worth (2 GiB). */
export const MAX_HANDLER_FILE_BYTES = 2 ** 31;

/** Fields the schema already gives as a FunctionConfig holds them. */
type AsDeclared = "parameters" | "default_model_filename" | "model_warmup" | "isolation" | "rollout" | "response_cache" | "ensemble_scheduling" | "handler" | "handler_timeout_ms" | "max_input_elements" | "embedding";

/** The schema's output: function.yaml's fields with defaults applied, before `toDeclared()`. */
export interface RawConfig extends Pick<FunctionConfig, AsDeclared> {
  name?: string;
  platform?: string;
  /** "" only in Triton's JSON, where an ensemble's backend prints empty. */
  backend?: (typeof BACKENDS)[number] | "";
  max_batch_size?: number;
  input: RawTensor[];
  output: RawTensor[];
  version_policy?:
    | { latest?: { num_versions: number }; all?: Record<string, never>; specific?: { versions: number[] } }
    | undefined;
  instance_group: { name: string; count: number; kind: InstanceGroup["kind"]; gpus: number[]; rate_limiter?: InstanceRateLimiter; host_policy?: InstanceGroup["host_policy"] }[];
  dynamic_batching?: Omit<DynamicBatching, "target_latency_ms"> & { target_latency_ms?: number };
  sequence_batching?: Omit<SequenceBatching, "shared_input" | "max_sequences" | "state"> & {
    shared_input?: SequenceBatching["shared_input"];
    max_sequences?: number;
    state: (Omit<SequenceBatching["state"][number], "batch_axis"> & { batch_axis?: number })[];
  };
  optimization: { graph: { level: number }; execution_accelerators?: ExecutionAccelerators };
  accelerator?: Accelerator;
  scale?: ScaleConfig;
  rate_limit?: Omit<RateLimitConfig, "burst" | "total_burst"> & { burst?: number; total_burst?: number };
  generation?: Omit<GenerationConfig, "model">;
}

/** Triton's input layouts (ModelInput.Format). */
export const INPUT_FORMATS = ["FORMAT_NONE", "FORMAT_NHWC", "FORMAT_NCHW"] as const;

export interface RawTensor {
  name: string;
  data_type: TritonDataType;
  dims: number[];
  reshape?: { shape: number[] };
  optional?: boolean;
  label_filename?: string;
  format?: (typeof INPUT_FORMATS)[number];
}

function tensorShape(dialect: Dialect) {
  return {
    name: z.string().min(1),
    data_type: z.enum(CONFIG_DATA_TYPES),
    dims: dims(dialect).min(1, {
      error: "must not be empty; for a scalar use dims: [1] with reshape: { shape: [] }",
    }),
    // As in protobuf, whose JSON (and a config.pbtxt through it) leaves an empty list out: `reshape: {}` is a scalar's `shape: []`.
    reshape: message({ shape: dims(dialect).default([]) }).optional(),
  };
}

function inputSchema(dialect: Dialect) {
  const extras: z.ZodRawShape = dialect === "json" ? { is_shape_tensor: onlyDefault(false), allow_ragged_batch: onlyDefault(false) } : {};
  // Triton's image layout of an input: it changes nothing computed; clients read it (Triton's image
  // clients lay out pixels by it). NHWC and NCHW name three dimensions besides the batch.
  const format = z.enum(INPUT_FORMATS).optional();
  return z
    .strictObject({ ...tensorShape(dialect), optional: z.boolean().default(false), format, ...extras })
    .refine((i) => i.format === undefined || i.format === "FORMAT_NONE" || i.dims.length === 3, {
      error: (iss) => `${(iss.input as { format: string }).format} needs dims of three dimensions (without the batch), not ${JSON.stringify((iss.input as { dims: unknown }).dims)}`,
      path: ["format"],
    });
}

function outputSchema(dialect: Dialect) {
  const extras: z.ZodRawShape = dialect === "json" ? { is_shape_tensor: onlyDefault(false) } : {};
  // Triton's classification labels, one per line, in a file of the function's folder ("" = none, as protobuf's default).
  const labels = z.string().refine((f) => f === "" || modelPathProblem(f) === undefined, {
    error: "must name a file inside the function's folder (a relative path without '..')",
  });
  return z.strictObject({ ...tensorShape(dialect), label_filename: labels.optional(), ...extras });
}

function versionPolicySchema(dialect: Dialect) {
  return message({
    latest: message({ num_versions: protoInt(dialect, z.int().min(1)).default(1) }).optional(),
    all: message({}).optional(),
    specific: message({
      versions: protoInt(
        dialect,
        z
          .int()
          .min(1, { error: (iss) => `${String(iss.input)} is not a version; versions are integers ≥ 1` })
          .max(MAX_VERSION, { error: (iss) => `${String(iss.input)} is not a version; versions are integers up to ${MAX_VERSION}` }),
      )
        .array()
        .min(1, { error: "must list at least one version" }),
    }).optional(),
  }).superRefine((policy, ctx) => {
    const chosen = Object.keys(policy).filter((k) => policy[k as keyof typeof policy] !== undefined);
    if (chosen.length !== 1) {
      ctx.addIssue({
        code: "custom",
        message: `needs exactly one of 'latest', 'all' or 'specific'${chosen.length ? `, not ${chosen.map((k) => `'${k}'`).join(" and ")}` : ""}`,
      });
    }
  });
}

function instanceGroupSchema(dialect: Dialect) {
  const extras: z.ZodRawShape =
    dialect === "json"
      ? {
          secondary_devices: onlyDefault([]),
          profile: onlyDefault([]),
          passive: onlyDefault(false),
          // Triton's: a server policy's name ("" none).
          host_policy: z.string().max(128).default(""),
        }
      : { host_policy: z.union([z.string().min(1).max(128), hostPolicySchema()]).optional() };
  return z.strictObject({
    name: z.string().default(""),
    count: protoInt(dialect, z.int().min(1)).default(1),
    kind: z.enum(INSTANCE_KINDS).default("KIND_AUTO"),
    gpus: protoInt(dialect, z.int().min(0)).array().default([]),
    rate_limiter: message({
      resources: z.strictObject({ name: z.string().min(1), global: z.boolean().default(false), count: protoInt(dialect, z.int().min(0)) }).array().default([]),
      priority: protoInt(dialect, z.int().min(0)).default(0),
    }).optional(),
    ...extras,
  });
}

/** A host policy's settings, as function.yaml writes them inline and `--host-policy` names them. */
export function hostPolicySchema() {
  return z
    .strictObject({
      cpu_cores: z
        .string()
        .max(256)
        .regex(/^\d{1,4}(-\d{1,4})?(,\d{1,4}(-\d{1,4})?)*$/, { error: `must list cores from 0 to ${MAX_CORE}, as "0-3" or "0,2,4-5"` })
        .refine((list) => parseCores(list) !== undefined, { error: `has a range that ends before it starts, or a core above ${MAX_CORE}` })
        .optional(),
      numa_node: z.int().min(0).max(1023).optional(),
    })
    .refine((p) => p.cpu_cores !== undefined || p.numa_node !== undefined, { error: "names cpu_cores, numa_node or both" });
}

/** The highest core a host policy may name (Linux's default CONFIG_NR_CPUS is 8192; tensorfn's hosts have far fewer). */
export const MAX_CORE = 4095;

/**
 * The cores a list names ("0-3", "0,2,4-5"), ascending, without repeats; undefined for a reversed
 * range or a core above MAX_CORE. At most MAX_CORE + 1 marks, whatever the list repeats.
 */
export function parseCores(list: string): number[] | undefined {
  const marked = new Uint8Array(MAX_CORE + 1);
  for (const part of list.split(",")) {
    const [from, to = from] = part.split("-").map(Number) as [number, number?];
    if (!(Number.isInteger(from) && Number.isInteger(to) && from <= to! && to! <= MAX_CORE)) return undefined;
    marked.fill(1, from, to! + 1);
  }
  const cores: number[] = [];
  marked.forEach((m, c) => m && cores.push(c));
  return cores;
}

function queuePolicySchema(dialect: Dialect) {
  return message({
    timeout_action: z.enum(["REJECT", "DELAY"]).default("REJECT"),
    default_timeout_microseconds: protoInt(dialect, z.int().min(0)).default(0),
    allow_timeout_override: z.boolean().default(false),
    max_queue_size: protoInt(dialect, z.int().min(0)).default(0),
  });
}

function dynamicBatchingSchema(dialect: Dialect) {
  // target_latency_ms is ours: accepted in function.yaml, never in Triton's JSON.
  const extras: z.ZodRawShape = dialect === "yaml" ? { target_latency_ms: z.number().positive().optional() } : {};
  return message({
    preferred_batch_size: protoInt(dialect, z.int().min(1)).array().default([]),
    max_queue_delay_microseconds: protoInt(dialect, z.int().min(0)).default(0),
    preserve_ordering: z.boolean().default(false),
    priority_levels: protoInt(dialect, z.int().min(0)).default(0),
    default_priority_level: protoInt(dialect, z.int().min(0)).default(0),
    default_queue_policy: queuePolicySchema(dialect).prefault({}),
    priority_queue_policy: z.record(z.string().regex(/^[1-9][0-9]*$/, "keys are priority levels (1, 2, …)"), queuePolicySchema(dialect)).default({}),
    ...extras,
  });
}

function warmupSchema(dialect: Dialect) {
  const input = message({
    data_type: z.enum(CONFIG_DATA_TYPES),
    dims: dims(dialect),
    zero_data: z.boolean().optional(),
    random_data: z.boolean().optional(),
    // Triton's: raw row-major bytes of one sample (BYTES: each element after its 4-byte little-endian length), in the function's warmup/ folder.
    input_data_file: z.string().superRefine((path, ctx) => {
      const problem = modelPathProblem(path);
      if (problem) ctx.addIssue({ code: "custom", message: problem.replace("the version folder", "the function's warmup/ folder") });
    }).optional(),
    // Ours: one sample's values inline (row-major), e.g. a sample rate: `{ data_type: TYPE_INT64, dims: [1], data: [16000] }`.
    data: z.union([z.number(), z.string(), z.boolean()]).array().max(65536).optional(),
  }).refine((i) => [i.zero_data === true, i.random_data === true, i.input_data_file !== undefined, i.data !== undefined].filter(Boolean).length === 1, {
    error: "needs one source: zero_data: true, random_data: true, input_data_file (a file in the function's warmup/ folder) or data (the values)",
  }).refine((i) => i.data === undefined || i.data.length === i.dims.reduce((a, b) => a * b, 1), {
    error: (iss) => `data holds ${(iss.input as { data: unknown[] }).data.length} values where dims ${JSON.stringify((iss.input as { dims: number[] }).dims)} need ${(iss.input as { dims: number[] }).dims.reduce((a, b) => a * b, 1)}`,
  });
  return message({
    name: z.string().default(""),
    batch_size: protoInt(dialect, z.int().min(1)).default(1),
    count: protoInt(dialect, z.int().min(0)).default(1),
    inputs: z.record(z.string(), input).default({}),
  });
}

function scaleSchema() {
  return message({
    min_instances: z.int().min(0).optional(),
    max_instances: z.int().min(1).optional(),
    target_concurrency: z.number().positive().optional(),
    idle_timeout_ms: z.int().min(0).optional(),
    park: z.enum(["host", "none"]).default("host"),
  });
}

/** The rollout block (ours, in function.yaml and in the load API's JSON config alike). */
export function rolloutSchema() {
  const share = { version: z.int().min(1), percent: z.number().min(0).max(100) };
  return z.strictObject({
    canary: z.strictObject(share).optional(),
    shadow: z.strictObject({ ...share, max_pending: z.int().min(1).max(10_000).default(64) }).optional(),
    analysis: z
      .strictObject({
        max_error_rate: z.number().min(0).max(1).default(0.01),
        max_p99_ratio: z.number().positive().default(1.2),
        slow_windows: z.int().min(1).max(100).default(2),
        min_requests: z.int().min(1).default(200),
        window_s: z.number().positive().max(86_400).default(60),
        steps: z
          .array(z.number().gt(0).max(100))
          .min(1)
          .default([10, 25, 50, 100])
          .refine((steps) => steps.every((s, i) => i === 0 || s > steps[i - 1]!), { error: "must ascend, each share above the one before" }),
      })
      .optional(),
  }).superRefine((rollout, ctx) => {
    if (!rollout.canary && !rollout.shadow) ctx.addIssue({ code: "custom", message: "needs a canary, a shadow or both" });
    if (rollout.analysis && !rollout.canary) ctx.addIssue({ code: "custom", path: ["analysis"], message: "judges a canary: add rollout.canary" });
    if (rollout.canary && rollout.shadow?.version === rollout.canary.version) ctx.addIssue({ code: "custom", path: ["shadow", "version"], message: "is the canary's version: a shadow compares another version with what the client was answered" });
  });
}

function rateLimitSchema() {
  return z.strictObject({
    requests_per_second: z.number().positive(),
    burst: z.int().min(1).optional(),
    // Lower case, as adapters and fetch's Headers present header names.
    key_header: z
      .string()
      .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, { error: "must be an HTTP header name, such as x-api-key" })
      .transform((h) => h.toLowerCase())
      .optional(),
    // Ours: one bucket over all keys, so fresh key values cannot multiply the rate (key_header only).
    total_requests_per_second: z.number().positive().optional(),
    total_burst: z.int().min(1).optional(),
  }).superRefine((limit, ctx) => {
    if (!limit.key_header && (limit.total_requests_per_second !== undefined || limit.total_burst !== undefined)) {
      const path = [limit.total_requests_per_second !== undefined ? "total_requests_per_second" : "total_burst"];
      ctx.addIssue({ code: "custom", path, message: "applies with key_header only; without it requests_per_second is already the total" });
    }
  });
}

function optimizationSchema(dialect: Dialect) {
  const extras: z.ZodRawShape =
    dialect === "json"
      ? {
          priority: onlyDefault("PRIORITY_DEFAULT"),
          input_pinned_memory: onlyDefault({ enable: true }),
          output_pinned_memory: onlyDefault({ enable: true }),
        }
      : {};
  return message({
    graph: message({ level: z.literal([-1, 0, 1, 2]).default(0) }).prefault({}),
    execution_accelerators: executionAcceleratorsSchema().optional(),
    ...extras,
  }).prefault({});
}

function parametersSchema(dialect: Dialect) {
  const value = z.strictObject(
    { string_value: z.string() },
    { error: dialect === "yaml" ? "expected a string, number or boolean, or { string_value: ... }" : undefined },
  );
  if (dialect === "json") return z.record(z.string(), value);
  const scalar = (v: unknown) => typeof v === "string" || typeof v === "number" || typeof v === "boolean";
  return z.record(
    z.string(),
    z.preprocess((v) => (scalar(v) ? { string_value: String(v) } : v), value),
  );
}

function schemaFor(dialect: Dialect): z.ZodType<RawConfig> {
  const platforms = dialect === "json" ? ([...ONNX_PLATFORMS, "ensemble", ""] as const) : ([...ONNX_PLATFORMS, "ensemble"] as const);
  // Triton's JSON prints an ensemble's backend as "".
  const backends = dialect === "json" ? ([...BACKENDS, ""] as const) : BACKENDS;
  const ownKeys: z.ZodRawShape =
    dialect === "yaml"
      ? {
          accelerator: z.enum(ACCELERATORS).optional(),
          scale: scaleSchema().optional(),
          rate_limit: rateLimitSchema().optional(),
          handler: z
            .string()
            .superRefine((path, ctx) => {
              const problem = modelPathProblem(path);
              if (problem) ctx.addIssue({ code: "custom", message: problem });
            })
            .optional(),
          handler_timeout_ms: z.int().min(1).max(3_600_000).optional(),
          max_input_elements: z.int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
          generation: generationSchema().optional(),
          embedding: embeddingSchema().optional(),
          isolation: isolationSchema().optional(),
        }
      : {};
  return z
    .strictObject({
      name: z.string().optional(),
      platform: z.enum(platforms).optional(),
      backend: z.enum(backends).optional(),
      max_batch_size: protoInt(dialect, z.int().min(0)).optional(),
      input: inputSchema(dialect).array().default([]),
      output: outputSchema(dialect).array().default([]),
      version_policy: versionPolicySchema(dialect).optional(),
      instance_group: instanceGroupSchema(dialect).array().default([]),
      dynamic_batching: dynamicBatchingSchema(dialect).optional(),
      sequence_batching: sequenceBatchingSchema(dialect).optional(),
      optimization: optimizationSchema(dialect),
      parameters: parametersSchema(dialect).default({}),
      default_model_filename: z
        .string()
        .default("model.onnx")
        .superRefine((path, ctx) => {
          const problem = modelPathProblem(path);
          if (problem) ctx.addIssue({ code: "custom", message: problem });
        }),
      model_warmup: warmupSchema(dialect).array().default([]),
      rollout: rolloutSchema().optional(),
      response_cache: message({ enable: z.boolean().default(false) }).optional(),
      ensemble_scheduling: message({
        step: z
          .strictObject({
            model_name: z.string().min(1),
            model_version: protoInt(dialect, z.int().min(-1)).default(-1),
            input_map: z.record(z.string(), z.string()).default({}),
            output_map: z.record(z.string(), z.string()).default({}),
            // Ours: run the step only when this holds (step-condition.ts).
            condition: z.string().optional(),
          })
          .array()
          .min(1),
      }).optional(),
      ...ownKeys,
    })
    .superRefine((config, ctx) => {
      for (const { path, problem } of [...semanticProblems(config), ...generationProblems(config), ...embeddingProblems(config), ...isolationProblems(config, dialect)]) ctx.addIssue({ code: "custom", path, message: problem });
    })
    // Triton's host_policy pins a model's instances; here a process is what can be pinned, so a
    // Triton config (which cannot say `isolation`) that names a policy runs in a process of its own.
    .transform((config) => (dialect === "json" && hasHostPolicy(config) ? { ...config, isolation: { mode: "process" as const, env: {} } } : config));
}

const schemas = { yaml: schemaFor("yaml"), json: schemaFor("json") };

/** The zod schema for one dialect; strict: an unknown key anywhere is an error. */
export function functionSchema(dialect: Dialect): z.ZodType<RawConfig> {
  return schemas[dialect];
}

/**
 * Rules that span fields, checked once the shape is right: unique tensor names, reshape element
 * counts, batching settings against `max_batch_size`, GPU lists on CPU groups, identity backends.
 */
function semanticProblems(config: RawConfig): { path: PropertyKey[]; problem: string }[] {
  const problems: { path: PropertyKey[]; problem: string }[] = [];
  for (const key of ["input", "output"] as const) {
    const seen = new Map<string, number>();
    config[key].forEach((tensor, i) => {
      const first = seen.get(tensor.name);
      if (first !== undefined) {
        problems.push({ path: [key, i, "name"], problem: `duplicate ${key} name '${tensor.name}' (also ${key}[${first}])` });
      } else {
        seen.set(tensor.name, i);
      }
      if (tensor.reshape) {
        const fromDims = knownElementCount(tensor.dims);
        const fromShape = knownElementCount(tensor.reshape.shape);
        if (fromDims !== undefined && fromShape !== undefined && fromDims !== fromShape) {
          problems.push({
            path: [key, i, "reshape", "shape"],
            problem: `${formatDims(tensor.reshape.shape)} has ${fromShape} element(s) but dims ${formatDims(tensor.dims)} has ${fromDims}`,
          });
        }
      }
    });
  }
  const mbs = config.max_batch_size;
  if (config.dynamic_batching && mbs === 0) {
    problems.push({
      path: ["dynamic_batching"],
      problem: "needs a batch dimension, but max_batch_size is 0; set max_batch_size ≥ 1 or remove dynamic_batching",
    });
  }
  problems.push(...sequenceProblems(config));
  const thread = config.parameters.execution_thread?.string_value;
  if (thread !== undefined && !["auto", "main", "worker"].includes(thread)) {
    problems.push({ path: ["parameters", "execution_thread"], problem: `${JSON.stringify(thread.slice(0, 32))} is not one of auto, main, worker` });
  }
  for (const flag of ["allow_spinning", "weights_in_place", "wake_unpacked"]) {
    const value = config.parameters[flag]?.string_value;
    if (value !== undefined && !["true", "false", "1", "0"].includes(value)) {
      problems.push({ path: ["parameters", flag], problem: `${JSON.stringify(value.slice(0, 32))} is not one of true, false` });
    }
  }
  const scale = config.scale;
  if (scale?.min_instances !== undefined && scale.max_instances !== undefined && scale.min_instances > scale.max_instances) {
    problems.push({ path: ["scale", "min_instances"], problem: `${scale.min_instances} is more than max_instances ${scale.max_instances}` });
  }
  const inputs = new Map(config.input.map((t) => [t.name, t]));
  config.model_warmup.forEach((sample, i) => {
    if (mbs !== undefined && mbs > 0 && sample.batch_size > mbs) {
      problems.push({ path: ["model_warmup", i, "batch_size"], problem: `${sample.batch_size} is larger than max_batch_size ${mbs}` });
    }
    // Declared inputs let the sample be checked now, not at its first load (undeclared ones come from the model).
    if (inputs.size === 0) return;
    for (const [name, input] of Object.entries(sample.inputs)) {
      const declared = inputs.get(name);
      if (!declared) {
        problems.push({ path: ["model_warmup", i, "inputs", name], problem: `'${name}' is not an input (inputs: ${[...inputs.keys()].join(", ")})` });
      } else if (declared.data_type !== input.data_type) {
        problems.push({ path: ["model_warmup", i, "inputs", name, "data_type"], problem: `${input.data_type} does not match input '${name}' (${declared.data_type})` });
      } else if (input.dims.length !== declared.dims.length || input.dims.some((d, k) => declared.dims[k] !== -1 && declared.dims[k] !== d)) {
        problems.push({ path: ["model_warmup", i, "inputs", name, "dims"], problem: `${formatDims(input.dims)} does not fit input '${name}' dims ${formatDims(declared.dims)}` });
      }
    }
  });
  const batching = config.dynamic_batching;
  if (batching) {
    const levels = batching.priority_levels;
    const level = batching.default_priority_level;
    if (levels > 0 && (level < 1 || level > levels)) {
      problems.push({ path: ["dynamic_batching", "default_priority_level"], problem: `${level} is not a level in 1..${levels} (priority_levels)` });
    }
    if (levels === 0 && level !== 0) {
      problems.push({ path: ["dynamic_batching", "default_priority_level"], problem: "needs priority_levels ≥ 1" });
    }
    for (const key of Object.keys(batching.priority_queue_policy)) {
      if (Number(key) > levels) {
        problems.push({ path: ["dynamic_batching", "priority_queue_policy", key], problem: `level ${key} is beyond priority_levels ${levels}` });
      }
    }
  }
  if (config.dynamic_batching && mbs !== undefined && mbs > 0) {
    config.dynamic_batching.preferred_batch_size.forEach((size, i) => {
      if (size > mbs) {
        problems.push({
          path: ["dynamic_batching", "preferred_batch_size", i],
          problem: `${size} is larger than max_batch_size ${mbs}`,
        });
      }
    });
  }
  config.instance_group.forEach((group, i) => {
    if (group.gpus.length > 0 && (group.kind === "KIND_CPU" || group.kind === "KIND_MODEL")) {
      problems.push({ path: ["instance_group", i, "gpus"], problem: `gpus apply to KIND_GPU and KIND_AUTO groups, not ${group.kind}` });
    }
  });
  if (config.platform === "ensemble") {
    problems.push(...ensembleProblems(config));
  } else if (config.ensemble_scheduling) {
    problems.push({ path: ["ensemble_scheduling"], problem: "applies to `platform: ensemble` only" });
  }
  if (config.backend === "handler") {
    if (config.platform) problems.push({ path: ["platform"], problem: `'${config.platform}' does not apply to backend 'handler'; remove platform` });
    if (!config.handler) problems.push({ path: ["backend"], problem: "backend 'handler' computes with the function's handler; name it with `handler: handler.ts`" });
    // Either tensors both ways (its compute() is a model written in TypeScript) or neither (execute() takes bodies).
    if ((config.input.length > 0) !== (config.output.length > 0)) {
      const [given, missing] = config.input.length > 0 ? ["input", "output"] : ["output", "input"];
      problems.push({
        path: [missing],
        problem: `backend 'handler' with tensors lists both input and output (its compute(inputs) answers tensors); without either, execute(requests) takes each body as it comes. Add ${missing} or remove ${given}`,
      });
    }
    // Exactly the carriers would read as a body handler (that is what a completed one lists).
    const carriers = config.input.length === 2 && config.input.every((t) => ["body", "content_type"].includes(t.name) && t.data_type === "TYPE_STRING");
    if (carriers) problems.push({ path: ["input"], problem: "inputs named body and content_type (TYPE_STRING) are what a body handler's execute() receives; give a tensor handler's inputs other names" });
  }
  if (config.handler_timeout_ms !== undefined && !config.handler) problems.push({ path: ["handler_timeout_ms"], problem: "applies to a function with a handler" });
  if (config.backend === "identity") {
    if (config.platform) {
      problems.push({ path: ["platform"], problem: `'${config.platform}' does not apply to backend 'identity'; remove platform` });
    }
    problems.push(...identityProblems(config.input, config.output));
  }
  return problems;
}
