/**
 * Choosing the next token from one row of logits, as vLLM orders it: logit_bias, then the
 * repetition / presence / frequency penalties, then greedy (temperature 0) or temperature, top-k,
 * min-p, top-p and a draw from the sequence's own seeded generator — so a seed gives the same
 * tokens whatever else shares the batch. Logprobs are of the model's raw distribution (vLLM's
 * default), the chosen token's and, when asked, the most likely alternatives'.
 *
 * A real vocabulary has 50–150 k tokens and this runs per token per sequence, so nothing here
 * sorts it: every step is a pass or two over typed arrays (a first version that sorted and mapped
 * plain arrays took 35 ms a token at 152 k; this one ~2 ms). Top-p sorts only the tokens that can
 * be in the nucleus, found by a histogram of their probabilities.
 */
import { mulberry32 } from "../../core/mod.ts";
import type { SampledToken, SamplingParams } from "../../core/mod.ts";

/** A sequence's own random numbers in [0, 1), seeded per request. */
export const seededRandom = mulberry32;

/** What a sequence has produced so far, for the penalties. */
export interface TokenHistory {
  /** Occurrences of each token in the output. */
  readonly output: ReadonlyMap<number, number>;
  /** Tokens of the prompt. */
  readonly prompt: ReadonlySet<number>;
}

/** Scratch rows, reused call after call (sampling is synchronous): the processed scores and the draw's weights. */
let scoresScratch = new Float32Array(0);
let weightsScratch = new Float32Array(0);

/**
 * Samples one token from `logits` (one row; left unchanged). `random` is the sequence's generator;
 * `suppress` lists tokens not allowed now (stop tokens before `minTokens`).
 */
export function sample(logits: Float32Array, params: SamplingParams, history: TokenHistory, random: () => number, suppress?: readonly number[]): SampledToken {
  const vocab = logits.length;
  const processed = params.logitBias !== undefined || params.repetitionPenalty !== 1 || params.presencePenalty !== 0 || params.frequencyPenalty !== 0 || (suppress?.length ?? 0) > 0;
  let scores = logits;
  if (processed) {
    if (scoresScratch.length < vocab) scoresScratch = new Float32Array(vocab);
    scores = scoresScratch.subarray(0, vocab);
    scores.set(logits);
    if (params.logitBias) for (const [token, bias] of params.logitBias) if (token < vocab) scores[token]! += bias;
    if (params.repetitionPenalty !== 1) {
      const penalise = (t: number) => {
        if (t < vocab) scores[t] = scores[t]! > 0 ? scores[t]! / params.repetitionPenalty : scores[t]! * params.repetitionPenalty;
      };
      for (const t of history.prompt) penalise(t);
      for (const t of history.output.keys()) if (!history.prompt.has(t)) penalise(t);
    }
    for (const [t, count] of history.output) if (t < vocab) scores[t]! -= params.presencePenalty + params.frequencyPenalty * count;
    if (suppress) for (const t of suppress) if (t < vocab) scores[t] = -Infinity;
  }
  const token = params.temperature === 0 ? argmax(scores) : draw(scores, params, random);
  return logprobOf(logits, token, params.topLogprobs, params.logprobs !== false);
}

/**
 * The log probability of `token` in `logits` (one row, the model's raw distribution; NaN without
 * `chosen`) and its `top` most likely alternatives: a sampled token's and a prompt token's alike.
 */
export function logprobOf(logits: Float32Array, token: number, top: number, chosen = true): SampledToken {
  if (!chosen && top === 0) return { token, logprob: Number.NaN };
  const norm = logSumExp(logits);
  const result: SampledToken = { token, logprob: chosen ? logits[token]! - norm : Number.NaN };
  if (top > 0) {
    const tokens = best(logits, top);
    result.top = { tokens, logprobs: tokens.map((t) => logits[t]! - norm) };
  }
  return result;
}

function argmax(scores: Float32Array): number {
  let best = 0;
  for (let i = 1; i < scores.length; i++) if (scores[i]! > scores[best]!) best = i;
  return best;
}

function logSumExp(values: Float32Array): number {
  let max = -Infinity;
  for (let i = 0; i < values.length; i++) if (values[i]! > max) max = values[i]!;
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += Math.exp(values[i]! - max);
  return Math.log(sum) + max;
}

/**
 * Temperature, then top-k, min-p and top-p, then one draw. Weights are exp((score − max) / T),
 * the most likely token's 1; a token filtered out gets weight 0.
 */
function draw(scores: Float32Array, params: SamplingParams, random: () => number): number {
  const vocab = scores.length;
  if (weightsScratch.length < vocab) weightsScratch = new Float32Array(vocab);
  const weights = weightsScratch.subarray(0, vocab);
  let max = -Infinity;
  for (let i = 0; i < vocab; i++) if (scores[i]! > max) max = scores[i]!;
  let floor = params.minP; // min-p: a weight below min_p of the best's (1) is out
  if (params.topK > 0 && params.topK < vocab) {
    // The k-th best score, as a weight, is a floor too (ties at it stay: they are as likely).
    const kth = best(scores, params.topK).at(-1)!;
    floor = Math.max(floor, Math.exp((scores[kth]! - max) / params.temperature));
  }
  let total = 0;
  for (let i = 0; i < vocab; i++) {
    const w = Math.exp((scores[i]! - max) / params.temperature);
    weights[i] = w >= floor ? w : 0;
    total += weights[i]!;
  }
  if (params.topP < 1) total = nucleus(weights, total, params.topP);
  let u = random() * total;
  let last = 0;
  for (let i = 0; i < vocab; i++) {
    if (weights[i] === 0) continue;
    last = i;
    u -= weights[i]!;
    if (u < 0) return i;
  }
  return last;
}

/**
 * Top-p: zeroes every weight outside the smallest set of most likely tokens whose mass reaches
 * `topP` of `total`, and returns the set's mass. A histogram of the weights by powers of two finds
 * the bucket where the mass crosses; only the tokens at or above that bucket are sorted.
 */
function nucleus(weights: Float32Array, total: number, topP: number): number {
  // A weight in (0, 1] by its float exponent: bucket b holds weights in (2^-(b+1), 2^-b] roughly (no log per token).
  const BUCKETS = 128;
  const bits = new Int32Array(weights.buffer, weights.byteOffset, weights.length);
  const bucketOf = (i: number) => Math.min(BUCKETS - 1, 127 - ((bits[i]! >>> 23) & 0xff));
  const mass = new Float64Array(BUCKETS);
  for (let i = 0; i < weights.length; i++) if (weights[i]! > 0) mass[bucketOf(i)]! += weights[i]!;
  let bucket = 0;
  for (let sum = 0; bucket < BUCKETS; bucket++) if ((sum += mass[bucket]!) >= topP * total) break;
  const candidates: number[] = [];
  for (let i = 0; i < weights.length; i++) {
    const w = weights[i]!;
    if (w > 0 && bucketOf(i) <= bucket) candidates.push(i);
  }
  candidates.sort((a, b) => weights[b]! - weights[a]! || a - b);
  let kept = 0;
  let sum = 0;
  while (kept < candidates.length && (kept === 0 || sum < topP * total)) sum += weights[candidates[kept++]!]!;
  const keep = new Set(candidates.slice(0, kept));
  for (let i = 0; i < weights.length; i++) if (weights[i]! > 0 && !keep.has(i)) weights[i] = 0;
  return sum;
}

/** The `k` highest-scoring tokens, most likely first (ties: the smaller id), in one pass. */
function best(scores: Float32Array, k: number): number[] {
  const chosen: number[] = [];
  const better = (a: number, b: number) => scores[a]! > scores[b]! || (scores[a] === scores[b] && a < b);
  for (let i = 0; i < scores.length; i++) {
    if (!(scores[i]! > -Infinity)) continue;
    if (chosen.length === k && !better(i, chosen[k - 1]!)) continue;
    if (chosen.length === k) chosen.pop();
    let at = chosen.length;
    while (at > 0 && better(i, chosen[at - 1]!)) at--;
    chosen.splice(at, 0, i);
  }
  return chosen;
}
