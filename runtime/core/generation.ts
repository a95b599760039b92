/**
 * What one token-generation request asks of a generator (a decoder served with `generation`):
 * OpenAI's and vLLM's sampling parameters, in token ids (the call layer tokenizes text and applies
 * stop strings). One definition: the OpenAI routes, Triton's generate and the scheduler read it.
 */
export interface SamplingParams {
  /** Tokens to generate at most (after the prompt). */
  maxTokens: number;
  /** 0 = greedy. */
  temperature: number;
  /** 0 or ≥ vocab = off. */
  topK: number;
  /** 1 = off. */
  topP: number;
  /** 0 = off. */
  minP: number;
  /** Same seed, same tokens, whatever else runs in the batch; undefined = random. */
  seed?: number;
  /** > 1 discourages tokens seen in the prompt or the output (1 = off). */
  repetitionPenalty: number;
  /** Subtracted once from a token that appeared in the output. */
  presencePenalty: number;
  /** Subtracted per occurrence in the output. */
  frequencyPenalty: number;
  /** Added to a token's logit, by token id. */
  logitBias?: ReadonlyMap<number, number>;
  /** Tokens that end the generation besides the model's end-of-sequence tokens. */
  stopTokenIds: readonly number[];
  /** vLLM's: go on past the model's end-of-sequence tokens (benchmarks, to fix output lengths). */
  ignoreEos?: boolean;
  /** Tokens generated before a stop token may end it. */
  minTokens: number;
  /** How many most likely alternatives to report per token (0 = none). */
  topLogprobs: number;
  /** false: the chosen token's logprob is not needed (NaN; it costs a pass over the vocabulary per token). */
  logprobs?: boolean;
  /**
   * With a value, the logprob of each prompt token after the first (given those before it) and as
   * many most likely alternatives, sent before the first generated token (vLLM's `prompt_logprobs`;
   * completions' `echo` with `logprobs`). Such a prompt is computed whole: no prefix-cache hit.
   */
  promptLogprobs?: number;
}

/** Tokens generated where a request names no max_tokens: OpenAI's completions' default, and KServe's (chat: what the model's length leaves). */
export const DEFAULT_MAX_TOKENS = 16;

export const GREEDY: SamplingParams = {
  maxTokens: DEFAULT_MAX_TOKENS,
  temperature: 0,
  topK: 0,
  topP: 1,
  minP: 0,
  repetitionPenalty: 1,
  presencePenalty: 0,
  frequencyPenalty: 0,
  stopTokenIds: [],
  minTokens: 0,
  topLogprobs: 0,
};

/** Why a generation ended, in OpenAI's words: a stop token (or stop string), or max_tokens / the model's length. */
export type FinishReason = "stop" | "length";

/** One sampled token: its id, its logprob under the model's raw distribution, its most likely alternatives. */
export interface SampledToken {
  token: number;
  /** The chosen token's log probability under the model's raw distribution (NaN where not asked for). */
  logprob: number;
  /** The `topLogprobs` most likely tokens and their logprobs, most likely first. */
  top?: { tokens: number[]; logprobs: number[] };
}

/** A token-generation request as a generator takes it: the prompt's token ids and how to sample. */
export interface PromptRequest {
  ids: readonly number[];
  sampling: SamplingParams;
  /** 1 is the highest (Triton's); 0 or absent: the default. */
  priority?: number;
  /** Fails the request with DEADLINE_EXCEEDED when it has waited this long. */
  timeoutMs?: number;
}

/**
 * What a generator streams for one request, as it is made: a generated token (`finish` on the
 * last), or, first and once when `promptLogprobs` asked for them, the prompt's logprobs (entry p:
 * prompt token p + 1 given those before it, with `top` alternatives each).
 */
export type TokenEvent =
  | { kind: "token"; chosen: SampledToken; finish?: FinishReason }
  | { kind: "prompt"; entries: readonly SampledToken[]; top: number; finish?: FinishReason };
