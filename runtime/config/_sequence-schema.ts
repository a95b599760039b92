// function.yaml's and config.pbtxt's `sequence_batching` (Triton's sequence batcher, with our
// batch_axis, shared_input and max_sequences): its schema and the rules that span its fields.
import * as z from "zod";
import { CONFIG_DATA_TYPES } from "../tensor/mod.ts";
import { dims, message, onlyDefault, protoInt } from "./_schema-fields.ts";
import type { Dialect } from "./_schema-fields.ts";
import type { RawConfig } from "./function-schema.ts";
import { modelPathProblem } from "./model-path.ts";

/** Triton's default max_sequence_idle_microseconds: one second. */
const DEFAULT_SEQUENCE_IDLE_US = 1_000_000;
/** Ours: live sequences one version holds at once by default (each keeps its state in memory). */
export const DEFAULT_MAX_SEQUENCES = 4096;

export function sequenceBatchingSchema(dialect: Dialect) {
  const control = z.strictObject({
    kind: z.enum(["CONTROL_SEQUENCE_START", "CONTROL_SEQUENCE_READY", "CONTROL_SEQUENCE_END", "CONTROL_SEQUENCE_CORRID"]),
    int32_false_true: protoInt(dialect).array().length(2).optional(),
    fp32_false_true: z.number().array().length(2).optional(),
    bool_false_true: z.boolean().array().length(2).optional(),
    data_type: z.enum(CONFIG_DATA_TYPES).optional(),
  });
  const ours: z.ZodRawShape =
    dialect === "yaml"
      ? {
          shared_input: z
            .strictObject({ name: z.string().min(1), data_type: z.enum(CONFIG_DATA_TYPES), dims: protoInt(dialect, z.int().min(1)).array().default([]), data: z.union([z.number(), z.string(), z.boolean()]).array().max(65536) })
            .array()
            .default([]),
          max_sequences: z.int().min(1).max(1_000_000).optional(),
        }
      : {};
  const stateOurs: z.ZodRawShape = dialect === "yaml" ? { batch_axis: z.int().min(0).optional() } : { use_same_buffer_for_input_output: onlyDefault(false), use_growable_memory: onlyDefault(false) };
  return message({
    max_sequence_idle_microseconds: protoInt(dialect, z.int().min(1)).default(DEFAULT_SEQUENCE_IDLE_US),
    direct: message({ max_queue_delay_microseconds: protoInt(dialect, z.int().min(0)).default(0), minimum_slot_utilization: z.number().min(0).max(1).default(0) }).optional(),
    oldest: message({
      // 0 (protobuf's default): every live sequence is a candidate.
      max_candidate_sequences: protoInt(dialect, z.int().min(0)).default(0),
      preferred_batch_size: protoInt(dialect, z.int().min(1)).array().default([]),
      max_queue_delay_microseconds: protoInt(dialect, z.int().min(0)).default(0),
      preserve_ordering: z.boolean().default(false),
    }).optional(),
    control_input: z.strictObject({ name: z.string().min(1), control: control.array().min(1) }).array().default([]),
    state: z
      .strictObject({
        input_name: z.string().min(1),
        output_name: z.string().min(1),
        data_type: z.enum(CONFIG_DATA_TYPES),
        dims: dims(dialect).min(1, { error: "must not be empty: one sequence's state has at least one dimension" }),
        initial_state: z
          .strictObject({
            name: z.string().default(""),
            data_type: z.enum(CONFIG_DATA_TYPES),
            dims: dims(dialect),
            zero_data: z.boolean().optional(),
            // Triton's: raw row-major bytes of one sequence's state, in the function's initial_state/ folder.
            data_file: z.string().superRefine((path, ctx) => {
              const problem = modelPathProblem(path);
              if (problem) ctx.addIssue({ code: "custom", message: problem.replace("the version folder", "the function's initial_state/ folder") });
            }).optional(),
          })
          .refine((s) => (s.zero_data === true) !== (s.data_file !== undefined), { error: "needs one source: zero_data: true, or data_file (a file in the function's initial_state/ folder)" })
          .array()
          .max(1)
          .default([]),
        ...stateOurs,
      })
      .array()
      .default([]),
    ...ours,
  }).superRefine((s, ctx) => {
    if (s.direct && s.oldest) ctx.addIssue({ code: "custom", message: "set one strategy, direct or oldest, not both" });
  });
}

/** Rules of sequence_batching that span fields: one batcher, names that do not collide, controls Triton can express. */
export function sequenceProblems(config: RawConfig): { path: PropertyKey[]; problem: string }[] {
  const seq = config.sequence_batching;
  if (!seq) return [];
  const problems: { path: PropertyKey[]; problem: string }[] = [];
  const at = (...path: PropertyKey[]) => ["sequence_batching", ...path];
  if (config.dynamic_batching) problems.push({ path: ["dynamic_batching"], problem: "a function has one batcher: remove dynamic_batching or sequence_batching" });
  if (config.max_batch_size === 0) problems.push({ path: at(), problem: "batches sequences along the batch dimension: set max_batch_size ≥ 1" });
  if (config.platform === "ensemble") problems.push({ path: at(), problem: "an ensemble has no batcher of its own" });
  if (config.response_cache?.enable) problems.push({ path: ["response_cache"], problem: "a sequence's answers depend on its state, not on the request alone: remove response_cache" });
  const clientInputs = new Set(config.input.map((i) => i.name));
  const seen = new Map<string, string>();
  const claim = (name: string, what: string, path: PropertyKey[]) => {
    const other = seen.get(name) ?? (clientInputs.has(name) ? "an input of the request" : undefined);
    if (other) problems.push({ path, problem: `'${name}' is already ${other}` });
    seen.set(name, what);
  };
  seq.control_input.forEach((c, i) => {
    claim(c.name, "a control input", at("control_input", i, "name"));
    if (c.control.length !== 1) problems.push({ path: at("control_input", i, "control"), problem: "needs exactly one control per input" });
    c.control.forEach((k, j) => {
      const forms = [k.int32_false_true, k.fp32_false_true, k.bool_false_true].filter((v) => v !== undefined).length;
      const corrid = k.kind === "CONTROL_SEQUENCE_CORRID";
      if (corrid && (forms > 0 || !k.data_type)) problems.push({ path: at("control_input", i, "control", j), problem: "CONTROL_SEQUENCE_CORRID takes data_type (TYPE_UINT64, TYPE_INT64, TYPE_UINT32, TYPE_INT32 or TYPE_STRING) and no false/true values" });
      if (corrid && k.data_type && !["TYPE_UINT64", "TYPE_INT64", "TYPE_UINT32", "TYPE_INT32", "TYPE_STRING"].includes(k.data_type)) problems.push({ path: at("control_input", i, "control", j, "data_type"), problem: `${k.data_type} cannot hold a sequence id` });
      if (!corrid && forms !== 1) problems.push({ path: at("control_input", i, "control", j), problem: `${k.kind} needs exactly one of int32_false_true, fp32_false_true, bool_false_true` });
    });
  });
  seq.state.forEach((s, i) => {
    claim(s.input_name, "a state input", at("state", i, "input_name"));
    if (s.data_type === "TYPE_STRING") problems.push({ path: at("state", i, "data_type"), problem: "a state of strings is not supported" });
    if (s.dims.some((d) => d < 0)) problems.push({ path: at("state", i, "dims"), problem: "a state's dims must be fixed (no -1)" });
    if ((s.batch_axis ?? 0) > s.dims.length) problems.push({ path: at("state", i, "batch_axis"), problem: `${s.batch_axis} is beyond the state's ${s.dims.length + 1} dimensions` });
    s.initial_state.forEach((init, j) => {
      if (init.data_type !== s.data_type) problems.push({ path: at("state", i, "initial_state", j, "data_type"), problem: `${init.data_type} is not the state's ${s.data_type}` });
      if (JSON.stringify(init.dims) !== JSON.stringify(s.dims)) problems.push({ path: at("state", i, "initial_state", j, "dims"), problem: `${JSON.stringify(init.dims)} is not the state's dims ${JSON.stringify(s.dims)}` });
    });
  });
  (seq.shared_input ?? []).forEach((s, i) => {
    claim(s.name, "a shared input", at("shared_input", i, "name"));
    const count = s.dims.reduce((a, b) => a * b, 1);
    if (s.data.length !== count) problems.push({ path: at("shared_input", i, "data"), problem: `holds ${s.data.length} values where dims ${JSON.stringify(s.dims)} need ${count}` });
  });
  return problems;
}
