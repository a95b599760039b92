// function.yaml's `generation` (ours): a decoder served with continuous batching over a paged KV
// cache — its schema and the rules that span fields.
import * as z from "zod";
import type { RawConfig } from "./function-schema.ts";

export const GENERATION_DEFAULTS = {
  mode: "continuous",
  max_num_seqs: 16,
  max_num_batched_tokens: 512,
  block_size: 16,
  kv_cache_bytes: 64 * 1024 * 1024,
  max_waiting_requests: 256,
  max_waiting_tokens: 1 << 20,
  prefix_caching: true,
} as const;

/** Ours, in vLLM's words where vLLM has one (max_num_seqs, max_num_batched_tokens, block_size, max_model_len). */
export interface GenerationConfig {
  /** `continuous` (iteration-level) or `static` (request-level: a batch runs until its last sequence ends). */
  mode: "continuous" | "static";
  max_num_seqs: number;
  max_num_batched_tokens: number;
  block_size: number;
  /** The KV cache's blocks; default: as many as `kv_cache_bytes` holds. */
  kv_cache_blocks?: number;
  kv_cache_bytes: number;
  /** Prompt plus generated tokens; default: config.json's max_position_embeddings (else 2048). */
  max_model_len?: number;
  max_waiting_requests: number;
  max_waiting_tokens: number;
  prefix_caching: boolean;
  /** What the model is, read from it when the config completes (not written in function.yaml). */
  model?: GenerationModel;
}

/** The decoder's KV geometry and vocabulary, from its signature (Optimum's layout). */
export interface GenerationModel {
  layers: number;
  kv_heads: number;
  head_dim: number;
  vocab: number;
  position_ids: boolean;
}

export function generationSchema() {
  return z
    .strictObject({
      mode: z.enum(["continuous", "static"]).default(GENERATION_DEFAULTS.mode),
      max_num_seqs: z.int().min(1).max(1024).default(GENERATION_DEFAULTS.max_num_seqs),
      max_num_batched_tokens: z.int().min(1).max(1 << 20).default(GENERATION_DEFAULTS.max_num_batched_tokens),
      block_size: z.int().min(1).max(1024).default(GENERATION_DEFAULTS.block_size),
      kv_cache_blocks: z.int().min(1).max(1 << 24).optional(),
      kv_cache_bytes: z.int().min(1).max(2 ** 40).default(GENERATION_DEFAULTS.kv_cache_bytes),
      max_model_len: z.int().min(2).max(1 << 24).optional(),
      max_waiting_requests: z.int().min(0).max(1 << 20).default(GENERATION_DEFAULTS.max_waiting_requests),
      max_waiting_tokens: z.int().min(1).max(2 ** 40).default(GENERATION_DEFAULTS.max_waiting_tokens),
      prefix_caching: z.boolean().default(GENERATION_DEFAULTS.prefix_caching),
    });
}

/** Rules of `generation` that span fields: a generator has no other batcher, no batch dimension of its own, one model. */
export function generationProblems(config: RawConfig): { path: PropertyKey[]; problem: string }[] {
  if (!config.generation) return [];
  const problems: { path: PropertyKey[]; problem: string }[] = [];
  const other = (key: keyof RawConfig, why: string) => config[key] !== undefined && problems.push({ path: [key], problem: `a generator (generation) ${why}: remove ${String(key)}` });
  other("dynamic_batching", "batches by iteration, not by request");
  other("sequence_batching", "keeps its sequences itself");
  other("ensemble_scheduling", "runs one decoder");
  other("handler", "runs the decoder itself");
  if (config.response_cache?.enable) problems.push({ path: ["response_cache"], problem: "a generator's answers are sampled: remove response_cache" });
  if (config.max_batch_size !== undefined && config.max_batch_size !== 0) problems.push({ path: ["max_batch_size"], problem: "a generator takes one prompt per request (it batches sequences itself): set max_batch_size: 0 or leave it out" });
  if (config.backend && config.backend !== "onnxruntime") problems.push({ path: ["backend"], problem: "a generator runs an ONNX decoder: backend onnxruntime" });
  if (config.input.length > 0 || config.output.length > 0) problems.push({ path: [config.input.length > 0 ? "input" : "output"], problem: "a generator's tensors are its decoder's (Optimum's layout: input_ids, attention_mask, position_ids, past_key_values.*; logits, present.*): leave input and output out" });
  const g = config.generation;
  if (g.max_num_batched_tokens < g.max_num_seqs) problems.push({ path: ["generation", "max_num_batched_tokens"], problem: `${g.max_num_batched_tokens} is below max_num_seqs ${g.max_num_seqs}: every running sequence needs a token per iteration` });
  return problems;
}

/** Ours: a text encoder answering OpenAI's /v1/embeddings (its tokenizer beside the model). */
export interface EmbeddingConfig {
  /** The model output holding the embedding: [batch, hidden] as it is, [batch, seq, hidden] pooled. */
  output?: string;
  /** How a [batch, seq, hidden] output becomes one vector: the mean over the unmasked positions, the first (CLS) or the last. */
  pooling: "mean" | "cls" | "last";
  /** Scaled to unit length (cosine similarity is then a dot product), as sentence-transformers' Normalize. */
  normalize: boolean;
}

export function embeddingSchema() {
  return z.strictObject({
    output: z.string().min(1).optional(),
    pooling: z.enum(["mean", "cls", "last"]).default("mean"),
    normalize: z.boolean().default(true),
  });
}

/** A function is a generator or an encoder, and either runs one ONNX model. */
export function embeddingProblems(config: RawConfig): { path: PropertyKey[]; problem: string }[] {
  if (!config.embedding) return [];
  const problems: { path: PropertyKey[]; problem: string }[] = [];
  if (config.generation) problems.push({ path: ["embedding"], problem: "a function either generates (generation) or embeds (embedding): keep one" });
  if (config.sequence_batching) problems.push({ path: ["sequence_batching"], problem: "an encoder keeps no state between requests: remove sequence_batching" });
  if (config.platform === "ensemble" || (config.backend && config.backend !== "onnxruntime")) problems.push({ path: ["embedding"], problem: "an encoder runs an ONNX model: backend onnxruntime" });
  return problems;
}
