/**
 * A generator's request as its loop keeps it: the sequence (tokens, blocks, sampling state, its
 * stream), made once its prompt has passed the checks that need no other request (the tokens are
 * the model's; prompt plus max_tokens fit the model's length and the cache).
 */
import { invalidArg, PushQueue } from "../../core/mod.ts";
import type { PromptRequest, RuntimeError, SampledToken, SamplingParams, TokenEvent } from "../../core/mod.ts";
import { seededRandom } from "./sampling.ts";

/** One request's sequence: its tokens, its blocks, how it samples and where its tokens go. */
export interface Seq {
  id: number;
  ids: number[];
  promptLength: number;
  computed: number;
  table: number[];
  params: SamplingParams;
  random: () => number;
  output: Map<number, number>;
  prompt: Set<number>;
  stops: Set<number>;
  priority: number;
  arrival: number;
  arrivedMs: number;
  lastTokenMs?: number;
  started?: boolean;
  deadlineMs: number;
  state: "waiting" | "running" | "done";
  /** `params.promptLogprobs`: each prompt position's logprob as its chunk is computed, until sent. */
  promptLogprobs?: SampledToken[];
  promptSent?: boolean;
  cancelled?: RuntimeError;
  signal: AbortSignal;
  /** The stream's buffer between the loop and the request's reader. */
  sink: PushQueue<TokenEvent>;
}

/** What a prompt is checked against. */
export interface PromptLimits {
  vocab: number;
  maxModelLen: number;
  blockSize: number;
  /** The KV cache's blocks. */
  blocks: number;
}

/** The request's prompt ids, or INVALID_ARG naming what is wrong with them and its sampling. */
export function checkedPrompt(request: PromptRequest, limits: PromptLimits): number[] {
  const ids = [...request.ids];
  if (ids.length === 0) throw invalidArg("the prompt is empty: give at least one token");
  // Checked here, not by the model: one bad id would fail every sequence of its batch.
  const bad = ids.findIndex((id) => !(Number.isInteger(id) && id >= 0 && id < limits.vocab));
  if (bad >= 0) throw invalidArg(`input_ids[${bad}] is ${ids[bad]}, not a token of the model (0 to ${limits.vocab - 1})`);
  const { maxTokens } = request.sampling;
  if (ids.length + maxTokens > limits.maxModelLen) {
    throw invalidArg(`the prompt's ${ids.length} tokens plus max_tokens ${maxTokens} exceed the model's length of ${limits.maxModelLen} tokens`);
  }
  const blocksNeeded = Math.ceil((ids.length + maxTokens) / limits.blockSize);
  if (blocksNeeded > limits.blocks) {
    throw invalidArg(`the prompt's ${ids.length} tokens plus max_tokens ${maxTokens} need ${blocksNeeded} KV blocks, more than the cache holds (${limits.blocks}; generation.kv_cache_blocks)`);
  }
  return ids;
}

/** A new waiting sequence for a checked prompt. */
export function newSequence(o: { id: number; ids: number[]; request: PromptRequest; arrival: number; now: number; signal: AbortSignal }): Seq {
  const { ids, request, now } = o;
  const params = request.sampling;
  return {
    id: o.id,
    ids,
    promptLength: ids.length,
    computed: 0,
    table: [],
    params,
    random: seededRandom(params.seed ?? Math.floor(Math.random() * 2 ** 32)),
    output: new Map(),
    prompt: new Set(ids),
    stops: new Set([...params.stopTokenIds]),
    priority: request.priority || 1,
    arrival: o.arrival,
    arrivedMs: now,
    deadlineMs: request.timeoutMs ? now + request.timeoutMs : Infinity,
    state: "waiting",
    signal: o.signal,
    sink: new PushQueue<TokenEvent>(),
  };
}
