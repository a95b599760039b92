/**
 * Choosing the next token from one row of logits, as vLLM orders it: logit_bias, then the
 * repetition / presence / frequency penalties, then greedy (temperature 0) or temperature, top-k,
 * top-p, min-p and a draw from the sequence's own seeded generator — so a seed gives the same
 * tokens whatever else shares the batch. Logprobs are of the model's raw distribution (vLLM's
 * default), the chosen token's and, when asked, the most likely alternatives'.
 */
import type { SamplingParams } from "../../core/mod.ts";

/** A sequence's own random numbers in [0, 1): mulberry32, seeded per request. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface SampledToken {
  token: number;
  logprob: number;
  /** The `topLogprobs` most likely tokens and their logprobs, most likely first. */
  top?: { tokens: number[]; logprobs: number[] };
}

/** What a sequence has produced so far, for the penalties. */
export interface TokenHistory {
  /** Occurrences of each token in the output. */
  readonly output: ReadonlyMap<number, number>;
  /** Tokens of the prompt. */
  readonly prompt: ReadonlySet<number>;
}

/**
 * Samples one token from `logits` (one row; left unchanged). `random` is the sequence's generator;
 * `suppress` lists tokens not allowed now (stop tokens before `minTokens`).
 */
export function sample(logits: Float32Array, params: SamplingParams, history: TokenHistory, random: () => number, suppress?: readonly number[]): SampledToken {
  const vocab = logits.length;
  const plain = !params.logitBias && params.repetitionPenalty === 1 && params.presencePenalty === 0 && params.frequencyPenalty === 0 && !suppress;
  if (plain && params.temperature === 0 && params.topLogprobs === 0) {
    // Greedy on the model's own logits: one pass for the choice, one for its logprob (the common case, per token per sequence).
    let best = 0;
    for (let i = 1; i < vocab; i++) if (logits[i]! > logits[best]!) best = i;
    const max = logits[best]!;
    let sum = 0;
    for (let i = 0; i < vocab; i++) sum += Math.exp(logits[i]! - max);
    return { token: best, logprob: -Math.log(sum) };
  }
  const raw = logSoftmax(logits);
  const scores = Float64Array.from(logits);
  if (params.logitBias) for (const [token, bias] of params.logitBias) if (token < vocab) scores[token]! += bias;
  if (params.repetitionPenalty !== 1) {
    const penalise = (t: number) => (scores[t] = scores[t]! > 0 ? scores[t]! / params.repetitionPenalty : scores[t]! * params.repetitionPenalty);
    const seen = new Set<number>([...history.prompt, ...history.output.keys()]);
    for (const t of seen) if (t < vocab) penalise(t);
  }
  if (params.presencePenalty !== 0 || params.frequencyPenalty !== 0) {
    for (const [t, count] of history.output) if (t < vocab) scores[t]! -= params.presencePenalty + params.frequencyPenalty * count;
  }
  if (suppress) for (const t of suppress) if (t < vocab) scores[t] = -Infinity;
  const token = params.temperature === 0 ? argmax(scores) : draw(scores, params, random);
  const result: SampledToken = { token, logprob: raw[token]! };
  if (params.topLogprobs > 0) result.top = topOf(raw, params.topLogprobs);
  return result;
}

function argmax(scores: Float64Array): number {
  let best = 0;
  for (let i = 1; i < scores.length; i++) if (scores[i]! > scores[best]!) best = i;
  return best;
}

function logSoftmax(logits: Float32Array): Float64Array {
  let max = -Infinity;
  for (const v of logits) if (v > max) max = v;
  let sum = 0;
  for (const v of logits) sum += Math.exp(v - max);
  const log = Math.log(sum) + max;
  return Float64Array.from(logits, (v) => v - log);
}

/** Temperature, then top-k, top-p and min-p over the candidates, then one draw. */
function draw(scores: Float64Array, params: SamplingParams, random: () => number): number {
  const order = Array.from({ length: scores.length }, (_, i) => i).filter((i) => scores[i]! > -Infinity);
  order.sort((a, b) => scores[b]! - scores[a]! || a - b);
  let candidates = params.topK > 0 && params.topK < order.length ? order.slice(0, params.topK) : order;
  const max = scores[candidates[0]!]!;
  let probs = candidates.map((t) => Math.exp((scores[t]! - max) / params.temperature));
  let total = probs.reduce((a, b) => a + b, 0);
  if (params.topP < 1) {
    let kept = 0;
    let mass = 0;
    while (kept < probs.length && (kept === 0 || mass < params.topP * total)) mass += probs[kept++]!;
    candidates = candidates.slice(0, kept);
    probs = probs.slice(0, kept);
    total = mass;
  }
  if (params.minP > 0) {
    const floor = params.minP * probs[0]!;
    const keep = probs.findIndex((p) => p < floor);
    if (keep > 0) {
      candidates = candidates.slice(0, keep);
      probs = probs.slice(0, keep);
      total = probs.reduce((a, b) => a + b, 0);
    }
  }
  let u = random() * total;
  for (let i = 0; i < probs.length; i++) {
    u -= probs[i]!;
    if (u < 0) return candidates[i]!;
  }
  return candidates[candidates.length - 1]!;
}

function topOf(raw: Float64Array, count: number): { tokens: number[]; logprobs: number[] } {
  const tokens: number[] = [];
  for (let i = 0; i < raw.length; i++) {
    if (tokens.length < count) tokens.push(i);
    else if (raw[i]! > raw[tokens[tokens.length - 1]!]!) tokens[tokens.length - 1] = i;
    else continue;
    for (let j = tokens.length - 1; j > 0 && raw[tokens[j]!]! > raw[tokens[j - 1]!]!; j--) [tokens[j], tokens[j - 1]] = [tokens[j - 1]!, tokens[j]!];
  }
  return { tokens, logprobs: tokens.map((t) => raw[t]!) };
}
