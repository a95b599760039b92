/**
 * A generator's token events as the tensors its responses carry (config/generation-config.ts's
 * GENERATOR_TENSORS): one generated token with its logprob, its most likely alternatives and, on
 * the last, why it ended; or, first and once, the prompt's own logprobs. The loop speaks in events;
 * this is the one place they become tensors.
 */
import type { FinishReason } from "../../core/mod.ts";
import type { ScheduledResult } from "../scheduler.ts";
import type { SampledToken } from "./sampling.ts";

const NO_IDS = new BigInt64Array(0);
const NO_FLOATS = new Float32Array(0);
const utf8 = new TextEncoder();

const finishTensor = (finish: FinishReason | undefined) => (finish ? { datatype: "BYTES" as const, shape: [1], data: [utf8.encode(finish)] } : { datatype: "BYTES" as const, shape: [0], data: [] });

/** One generated token; `finish` on the sequence's last. */
export function tokenTensors(chosen: SampledToken, finish: FinishReason | undefined): ScheduledResult {
  return {
    output_ids: { datatype: "INT64", shape: [1], data: BigInt64Array.of(BigInt(chosen.token)) },
    logprobs: { datatype: "FP32", shape: [1], data: Float32Array.of(chosen.logprob) },
    top_logprob_ids: chosen.top ? { datatype: "INT64", shape: [chosen.top.tokens.length], data: BigInt64Array.from(chosen.top.tokens, BigInt) } : { datatype: "INT64", shape: [0], data: NO_IDS },
    top_logprobs: chosen.top ? { datatype: "FP32", shape: [chosen.top.logprobs.length], data: Float32Array.from(chosen.top.logprobs) } : { datatype: "FP32", shape: [0], data: NO_FLOATS },
    finish_reason: finishTensor(finish),
  };
}

/** The prompt's logprobs (position p's predicting token p + 1), `top` alternatives each; `finish` where nothing is generated after them. */
export function promptTensors(entries: readonly SampledToken[], top: number, finish: FinishReason | undefined): ScheduledResult {
  return {
    output_ids: { datatype: "INT64", shape: [0], data: NO_IDS },
    logprobs: { datatype: "FP32", shape: [0], data: NO_FLOATS },
    top_logprob_ids: { datatype: "INT64", shape: [0], data: NO_IDS },
    top_logprobs: { datatype: "FP32", shape: [0], data: NO_FLOATS },
    finish_reason: finishTensor(finish),
    prompt_logprobs: { datatype: "FP32", shape: [entries.length], data: Float32Array.from(entries, (e) => e.logprob) },
    prompt_top_logprob_ids: { datatype: "INT64", shape: [entries.length, top], data: BigInt64Array.from(entries.flatMap((e) => e.top?.tokens ?? []), BigInt) },
    prompt_top_logprobs: { datatype: "FP32", shape: [entries.length, top], data: Float32Array.from(entries.flatMap((e) => e.top?.logprobs ?? [])) },
  };
}

/** A whole generation as one response (a scheduler's `enqueue`): every token and logprob, and the finish reason. */
export function wholeTensors(parts: readonly ScheduledResult[]): ScheduledResult {
  const ids: bigint[] = [];
  const logprobs: number[] = [];
  let finish: ScheduledResult[string] | undefined;
  for (const part of parts) {
    ids.push(...(part.output_ids!.data as BigInt64Array));
    logprobs.push(...(part.logprobs!.data as Float32Array));
    if (part.finish_reason!.shape[0]) finish = part.finish_reason;
  }
  return {
    output_ids: { datatype: "INT64", shape: [ids.length], data: BigInt64Array.from(ids) },
    logprobs: { datatype: "FP32", shape: [logprobs.length], data: Float32Array.from(logprobs) },
    top_logprob_ids: { datatype: "INT64", shape: [0], data: NO_IDS },
    top_logprobs: { datatype: "FP32", shape: [0], data: NO_FLOATS },
    finish_reason: finish ?? finishTensor(undefined),
  };
}
