import { defaultDynamicBatching } from "./dynamic-batching-defaults.ts";
import { RuntimeError, type ModelSignature, type TensorSignature } from "../core/mod.ts";
import { toConfigType } from "../tensor/mod.ts";
import type { FunctionConfig, TensorConfig } from "./function-config.ts";
import type { DeclaredConfig } from "./declared-config.ts";
import { completeIdentityConfig } from "./identity-config.ts";
import { completeHandlerConfig } from "./handler-config.ts";
import { completeGenerationConfig } from "./generation-config.ts";
import { formatDims } from "./_dims.ts";
import { FUNCTION_FILE } from "./config-file.ts";

/** Triton's `--backend-config=onnxruntime,default-max-batch-size` default. */
export const DEFAULT_MAX_BATCH_SIZE = 4;

export interface CompleteOptions {
  /** `max_batch_size` for a batch-capable model whose config omits it; default 4, as Triton. */
  defaultMaxBatchSize?: number;
  /** The file the config was read from, as messages name it: function.yaml (the default) or config.pbtxt. */
  configFile?: string;
}

/** A config that contradicts its model: one message (a 400), and each contradiction apart, for `check` to place. */
export class ConfigContradiction extends RuntimeError {
  readonly problems: readonly string[];
  constructor(head: string, problems: string[]) {
    super("INVALID_ARG", `${head} ${problems.join("; ")}`);
    this.problems = problems;
  }
}

/**
 * Completes a declared config from the model's own signature and checks that the two agree,
 * following Triton's ONNX auto-complete:
 *
 * - `max_batch_size` omitted: the model can batch when every input and every served output has a
 *   variable (-1) first dimension; then it is `defaultMaxBatchSize` and, when that is above 1 and
 *   the config has no `dynamic_batching`, dynamic batching is enabled with defaults. Otherwise 0.
 *   Unlike Triton, a config that lists tensors with their batch dimension included (dims of the
 *   model's full rank) and no dynamic_batching also reads as 0, since that is what it means.
 *   An explicit `max_batch_size: 0` is kept (Triton would overwrite it).
 * - `max_batch_size` > 0 requires that variable first dimension on every such tensor.
 * - `input`/`output` empty: taken from the model, dims without the batch dimension, a scalar as
 *   `dims: [1]` with `reshape: { shape: [] }`.
 * - Listed tensors must exist in the model with the same data type and rank; each dimension must
 *   equal the model's or the model's must be variable (a config may be stricter). `reshape.shape`
 *   is what gets compared when given. Every model input must be listed; outputs may be a subset.
 *
 * Throws an INVALID_ARG RuntimeError naming both sides of every contradiction found.
 * `backend: identity` configs have no model and are completed by `completeIdentityConfig()`.
 */
export function completeConfig(
  declared: DeclaredConfig,
  modelSignature: ModelSignature,
  options: CompleteOptions = {},
): FunctionConfig {
  if (declared.backend === "identity") return completeIdentityConfig(declared);
  if (declared.backend === "handler") return completeHandlerConfig(declared);
  if (declared.generation) return completeGenerationConfig(declared, modelSignature);
  // An ensemble's tensors are the ones it declares; its steps' functions are checked when it loads.
  if (declared.backend === "ensemble") return { ...structuredClone(declared), accelerator: declared.accelerator ?? "auto", max_batch_size: declared.max_batch_size ?? 0 };
  const fn = `function '${declared.name}'`;
  const model = declared.default_model_filename;
  const file = options.configFile ?? FUNCTION_FILE;
  const problems: string[] = [];
  // The sequence batcher feeds states, controls and shared inputs, and keeps the states' outputs:
  // the request's tensors are the others.
  const { signature, problems: sequenceProblems } = requestSignature(declared, modelSignature, model);
  problems.push(...sequenceProblems);

  problems.push(...missingNames("input", declared.input, signature.inputs, model, file, true));
  problems.push(...missingNames("output", declared.output, signature.outputs, model, file, false));
  if (problems.length > 0) throw new ConfigContradiction(`${fn}:`, problems);

  const served = declared.output.length > 0
    ? signature.outputs.filter((o) => declared.output.some((d) => d.name === o.name))
    : signature.outputs;
  const unbatchable = [
    ...signature.inputs.map((t) => ({ kind: "input", t })),
    ...served.map((t) => ({ kind: "output", t })),
  ].find(({ t }) => t.shape.length === 0 || t.shape[0] !== -1);
  const fixed = unbatchable && `${model} ${unbatchable.kind} '${unbatchable.t.name}' has shape ${formatDims(unbatchable.t.shape)}`;

  let maxBatchSize = declared.max_batch_size;
  let dynamicBatching = declared.dynamic_batching && structuredClone(declared.dynamic_batching);
  const inferred = maxBatchSize === undefined;
  if (maxBatchSize === undefined) {
    const listsBatchDim = !dynamicBatching && listsFullRank(declared, signature);
    maxBatchSize = unbatchable || listsBatchDim ? 0 : Math.max(0, options.defaultMaxBatchSize ?? DEFAULT_MAX_BATCH_SIZE);
    if (maxBatchSize > 1 && !dynamicBatching) {
      dynamicBatching = defaultDynamicBatching();
    }
    if (maxBatchSize === 0 && dynamicBatching) {
      problems.push(
        fixed
          ? `${file} enables dynamic_batching but ${fixed}, whose first dimension is not variable (-1), so it cannot batch`
          : `${file} enables dynamic_batching but omits max_batch_size, and the default max batch size is 0; set max_batch_size`,
      );
    }
    for (const size of dynamicBatching?.preferred_batch_size ?? []) {
      if (maxBatchSize > 0 && size > maxBatchSize) {
        problems.push(`dynamic_batching.preferred_batch_size ${size} is larger than max_batch_size ${maxBatchSize} (inferred; set max_batch_size)`);
      }
    }
  } else if (maxBatchSize > 0 && fixed) {
    problems.push(`${file} says max_batch_size ${maxBatchSize} but ${fixed}, whose first dimension is not variable (-1), so it cannot batch; set max_batch_size: 0`);
  }
  if (problems.length > 0) throw new ConfigContradiction(`${fn}:`, problems);

  const batching = maxBatchSize > 0;
  const complete = (kind: "input" | "output", listed: TensorConfig[], fromModel: readonly TensorSignature[]) => {
    if (listed.length === 0) return fromModel.map((t) => tensorFromModel(t, batching));
    for (const t of listed) {
      const m = fromModel.find((s) => s.name === t.name)!;
      const problem = contradiction(t, m, batching, model, file, inferred ? `; max_batch_size ${maxBatchSize} was inferred from ${model}` : "");
      if (problem) problems.push(`${kind} '${t.name}': ${problem}`);
    }
    return structuredClone(listed);
  };
  const input = complete("input", declared.input, signature.inputs);
  const output = complete("output", declared.output, signature.outputs);
  if (problems.length > 0) throw new ConfigContradiction(fn, problems);

  const config: FunctionConfig = {
    ...structuredClone(declared),
    accelerator: declared.accelerator ?? "auto",
    max_batch_size: maxBatchSize,
    input,
    output,
  };
  if (dynamicBatching) config.dynamic_batching = dynamicBatching;
  return config;
}

/** Listed tensors the model lacks, and (for inputs) model inputs the config leaves out. */
function missingNames(
  kind: "input" | "output",
  listed: readonly TensorConfig[],
  fromModel: readonly TensorSignature[],
  model: string,
  file: string,
  needAll: boolean,
): string[] {
  if (listed.length === 0) return [];
  const problems: string[] = [];
  const has = fromModel.map((t) => t.name);
  for (const t of listed) {
    if (!has.includes(t.name)) {
      problems.push(`${file} names ${kind} '${t.name}' that ${model} does not have (it has: ${has.join(", ") || "none"})`);
    }
  }
  if (needAll) {
    for (const name of has) {
      if (!listed.some((t) => t.name === name)) {
        problems.push(`${model} ${kind} '${name}' is missing from ${file} (it lists: ${listed.map((t) => t.name).join(", ")}); list every model ${kind}, or none to take them from the model`);
      }
    }
  }
  return problems;
}

/** True when a listed tensor has the model's full rank, i.e. its dims include the batch dimension. */
function listsFullRank(declared: DeclaredConfig, signature: ModelSignature): boolean {
  const all = [...signature.inputs, ...signature.outputs];
  return [...declared.input, ...declared.output].some((t) => {
    const m = all.find((s) => s.name === t.name);
    return m !== undefined && (t.reshape?.shape ?? t.dims).length === m.shape.length;
  });
}

function tensorFromModel(t: TensorSignature, batching: boolean): TensorConfig {
  const dims = batching ? t.shape.slice(1) : [...t.shape];
  const tensor: TensorConfig = { name: t.name, data_type: toConfigType(t.datatype), dims, optional: false };
  if (dims.length === 0) {
    tensor.dims = [1];
    tensor.reshape = { shape: [] };
  }
  return tensor;
}

/** Why a listed tensor disagrees with the model's, naming both sides; undefined when it agrees. */
function contradiction(t: TensorConfig, m: TensorSignature, batching: boolean, model: string, file: string, note: string): string | undefined {
  const modelType = toConfigType(m.datatype);
  if (t.data_type !== modelType) return `${file} says data_type ${t.data_type} but ${model} declares ${modelType}`;
  const shape = t.reshape?.shape ?? t.dims;
  const full = batching ? [-1, ...shape] : shape;
  const fits = full.length === m.shape.length && full.every((d, i) => m.shape[i] === -1 || m.shape[i] === d);
  if (fits) return undefined;
  const said = t.reshape ? `reshape.shape ${formatDims(shape)}` : `dims ${formatDims(shape)}`;
  const rank = full.length !== m.shape.length ? ` (rank ${full.length} against ${m.shape.length})` : "";
  return `${file} says ${said}${batching ? ` (shape ${formatDims(full)})` : ""} but ${model} declares ${formatDims(m.shape)}${rank}${note}`;
}

/**
 * The model's tensors a request carries: all of them, less what `sequence_batching` provides (state
 * inputs, control inputs, shared inputs) and keeps (state outputs) — each of which the model must have.
 */
function requestSignature(declared: DeclaredConfig, signature: ModelSignature, model: string): { signature: ModelSignature; problems: string[] } {
  const seq = declared.sequence_batching;
  if (!seq) return { signature, problems: [] };
  const problems: string[] = [];
  const provided = new Map<string, string>();
  seq.state.forEach((s, i) => provided.set(s.input_name, `sequence_batching.state[${i}].input_name`));
  seq.control_input.forEach((c, i) => provided.set(c.name, `sequence_batching.control_input[${i}].name`));
  seq.shared_input.forEach((s, i) => provided.set(s.name, `sequence_batching.shared_input[${i}].name`));
  const kept = new Map(seq.state.map((s, i) => [s.output_name, `sequence_batching.state[${i}].output_name`]));
  for (const [name, field] of provided) {
    if (!signature.inputs.some((t) => t.name === name)) problems.push(`${field}: '${name}' is not an input of ${model} (it has: ${signature.inputs.map((t) => t.name).join(", ")})`);
  }
  for (const [name, field] of kept) {
    if (!signature.outputs.some((t) => t.name === name)) problems.push(`${field}: '${name}' is not an output of ${model} (it has: ${signature.outputs.map((t) => t.name).join(", ")})`);
  }
  return {
    signature: { ...signature, inputs: signature.inputs.filter((t) => !provided.has(t.name)), outputs: signature.outputs.filter((t) => !kept.has(t.name)) },
    problems,
  };
}
