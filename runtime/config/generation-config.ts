import { invalidArg } from "../core/mod.ts";
import type { ModelSignature, TensorSignature } from "../core/mod.ts";
import type { DeclaredConfig } from "./declared-config.ts";
import type { FunctionConfig, TensorConfig } from "./function-config.ts";
import type { GenerationModel } from "./_generation-schema.ts";
import { formatDims } from "./_dims.ts";

/**
 * What a generator's requests carry and its answers hold: the prompt's token ids in; per response
 * the new tokens, their logprobs, the most likely alternatives (when asked) and, last, why it
 * ended; first, when asked (`SamplingParams.promptLogprobs`), one response with the prompt's
 * logprobs and alternatives. The decoder's own tensors stay inside the scheduler.
 */
export const GENERATOR_TENSORS: { input: TensorConfig[]; output: TensorConfig[] } = {
  input: [{ name: "input_ids", data_type: "TYPE_INT64", dims: [-1], optional: false }],
  output: [
    { name: "output_ids", data_type: "TYPE_INT64", dims: [-1], optional: false },
    { name: "logprobs", data_type: "TYPE_FP32", dims: [-1], optional: false },
    { name: "top_logprob_ids", data_type: "TYPE_INT64", dims: [-1], optional: false },
    { name: "top_logprobs", data_type: "TYPE_FP32", dims: [-1], optional: false },
    { name: "finish_reason", data_type: "TYPE_STRING", dims: [-1], optional: false },
    { name: "prompt_logprobs", data_type: "TYPE_FP32", dims: [-1], optional: true },
    { name: "prompt_top_logprob_ids", data_type: "TYPE_INT64", dims: [-1, -1], optional: true },
    { name: "prompt_top_logprobs", data_type: "TYPE_FP32", dims: [-1, -1], optional: true },
  ],
};

/**
 * Completes a `generation` function from its decoder, which must be in Hugging Face Optimum's
 * layout with a KV cache: `input_ids`, `attention_mask` (INT64 [batch, …]), optionally
 * `position_ids`, and `past_key_values.{i}.key/value` [batch, kv heads, past, head dim] for every
 * layer i; `logits` [batch, seq, vocab] and `present.{i}.key/value` out. Throws INVALID_ARG
 * naming every difference.
 */
export function completeGenerationConfig(declared: DeclaredConfig, signature: ModelSignature): FunctionConfig {
  const file = declared.default_model_filename;
  const problems: string[] = [];
  const inputs = new Map(signature.inputs.map((t) => [t.name, t]));
  const outputs = new Map(signature.outputs.map((t) => [t.name, t]));
  const expect = (t: TensorSignature | undefined, name: string, kind: string, datatype: string, rank: number) => {
    if (!t) return void problems.push(`${file} has no ${kind} '${name}'`);
    if (t.datatype !== datatype || t.shape.length !== rank) problems.push(`${file} ${kind} '${name}' is ${t.datatype} ${formatDims(t.shape)}; a decoder's is ${datatype} of rank ${rank}`);
  };
  expect(inputs.get("input_ids"), "input_ids", "input", "INT64", 2);
  expect(inputs.get("attention_mask"), "attention_mask", "input", "INT64", 2);
  const positionIds = inputs.has("position_ids");
  if (positionIds) expect(inputs.get("position_ids"), "position_ids", "input", "INT64", 2);
  const logits = outputs.get("logits");
  expect(logits, "logits", "output", "FP32", 3);
  let layers = 0;
  while (inputs.has(`past_key_values.${layers}.key`)) layers++;
  if (layers === 0) problems.push(`${file} has no 'past_key_values.0.key' input: export the decoder with its KV cache (Optimum: --task text-generation-with-past)`);
  const first = inputs.get("past_key_values.0.key");
  const [, kvHeads = -1, , headDim = -1] = first?.shape ?? [];
  if (first && (first.shape.length !== 4 || kvHeads < 1 || headDim < 1)) problems.push(`${file} input 'past_key_values.0.key' is ${formatDims(first.shape)}: a fixed number of heads and head dimension are needed ([batch, heads, past, head_dim])`);
  for (let l = 0; l < layers; l++) {
    for (const part of ["key", "value"]) {
      const past = inputs.get(`past_key_values.${l}.${part}`);
      const present = outputs.get(`present.${l}.${part}`);
      if (!past) problems.push(`${file} has no input 'past_key_values.${l}.${part}'`);
      else if (past.datatype !== "FP32" || past.shape[1] !== kvHeads || past.shape[3] !== headDim) problems.push(`${file} input 'past_key_values.${l}.${part}' is ${past.datatype} ${formatDims(past.shape)}, unlike layer 0's FP32 [-1,${kvHeads},-1,${headDim}]`);
      if (!present) problems.push(`${file} has no output 'present.${l}.${part}'`);
    }
  }
  const known = new Set(["input_ids", "attention_mask", "position_ids"]);
  for (const name of inputs.keys()) {
    if (!known.has(name) && !/^past_key_values\.\d+\.(key|value)$/.test(name)) problems.push(`${file} input '${name}' is not one a decoder in Optimum's layout takes (a merged decoder's use_cache_branch: export without --no-post-process merging)`);
  }
  const vocab = logits?.shape[2] ?? -1;
  if (logits && vocab < 1) problems.push(`${file} output 'logits' has no fixed vocabulary size (${formatDims(logits.shape)})`);
  if (problems.length > 0) throw invalidArg(`function '${declared.name}' (generation): ${problems.join("; ")}`);
  const model: GenerationModel = { layers, kv_heads: kvHeads, head_dim: headDim, vocab, position_ids: positionIds };
  return {
    ...structuredClone(declared),
    accelerator: declared.accelerator ?? "auto",
    max_batch_size: 0,
    input: structuredClone(GENERATOR_TENSORS.input),
    output: structuredClone(GENERATOR_TENSORS.output),
    generation: { ...declared.generation!, model },
  };
}

/**
 * The output an encoder's `embedding` reads (`embedding.output`, else `sentence_embedding` where the
 * model has it, else `last_hidden_state`), checked against the completed config: INVALID_ARG when
 * the tensors are not a text encoder's (`input_ids` and `attention_mask` in; an FP32 output of rank
 * 2, or 3 to pool).
 */
export function embeddingOutput(config: FunctionConfig): { name: string; pooled: boolean } {
  const batching = config.max_batch_size > 0;
  const rank = (t: TensorConfig) => (t.reshape?.shape ?? t.dims).length + (batching ? 1 : 0);
  const problems: string[] = [];
  for (const name of ["input_ids", "attention_mask"]) {
    const input = config.input.find((i) => i.name === name);
    if (!input || input.data_type !== "TYPE_INT64" || rank(input) !== 2) problems.push(`an encoder takes '${name}' INT64 [batch, seq]`);
  }
  const extra = config.input.filter((i) => !["input_ids", "attention_mask", "token_type_ids"].includes(i.name));
  if (extra.length > 0) problems.push(`inputs ${extra.map((i) => `'${i.name}'`).join(", ")} are not a text encoder's (input_ids, attention_mask, token_type_ids)`);
  const wanted = config.embedding?.output ?? (config.output.some((o) => o.name === "sentence_embedding") ? "sentence_embedding" : "last_hidden_state");
  const output = config.output.find((o) => o.name === wanted);
  if (!output) problems.push(`embedding.output '${wanted}' is not an output (it has: ${config.output.map((o) => o.name).join(", ")})`);
  else if (output.data_type !== "TYPE_FP32" || ![2, 3].includes(rank(output))) problems.push(`output '${wanted}' must be FP32 [batch, hidden] or [batch, seq, hidden] to embed`);
  if (problems.length > 0) throw invalidArg(`function '${config.name}' (embedding): ${problems.join("; ")}`);
  return { name: wanted, pooled: rank(output!) === 2 };
}
