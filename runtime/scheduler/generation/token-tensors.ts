/**
 * Where a generator meets tensors, for the calls that speak them (KServe over HTTP and gRPC, an
 * ensemble's step, ctx.infer): a request's `input_ids` and parameters become a `PromptRequest`,
 * and each token event becomes the tensors its response carries (config/generation-config.ts's
 * GENERATOR_TENSORS). The loop speaks in typed requests and events; the OpenAI routes take those
 * as they are.
 */
import { invalidArg } from "../../core/mod.ts";
import type { FinishReason, PromptRequest, SampledToken, SamplingParams, TokenEvent } from "../../core/mod.ts";
import type { ScheduledRequest, ScheduledResult } from "../scheduler.ts";
import { samplingFromParameters } from "./sampling-parameters.ts";

const NO_IDS = new BigInt64Array(0);
const NO_FLOATS = new Float32Array(0);
const utf8 = new TextEncoder();

/** A KServe-form request's prompt (`input_ids`, INT64) and sampling (its parameters over `defaults`). */
export function promptRequest(request: ScheduledRequest, defaults: SamplingParams): PromptRequest {
  const prompt = request.feeds.input_ids;
  if (!prompt || prompt.datatype !== "INT64") throw invalidArg(`a generation request's prompt is 'input_ids' (INT64)`);
  const typed: PromptRequest = { ids: Array.from(prompt.data as BigInt64Array, Number), sampling: samplingFromParameters(request.parameters, defaults) };
  if (request.priority) typed.priority = request.priority;
  if (request.timeoutMs) typed.timeoutMs = request.timeoutMs;
  return typed;
}

const finishTensor = (finish: FinishReason | undefined) => (finish ? { datatype: "BYTES" as const, shape: [1], data: [utf8.encode(finish)] } : { datatype: "BYTES" as const, shape: [0], data: [] });

/** Each event as its response's tensors: a generated token with its logprob and alternatives, or the prompt's logprobs. */
export async function* asTensors(events: AsyncIterable<TokenEvent>): AsyncGenerator<ScheduledResult, void, undefined> {
  for await (const event of events) yield event.kind === "token" ? tokenTensors(event.chosen, event.finish) : promptTensors(event.entries, event.top, event.finish);
}

function tokenTensors(chosen: SampledToken, finish: FinishReason | undefined): ScheduledResult {
  return {
    output_ids: { datatype: "INT64", shape: [1], data: BigInt64Array.of(BigInt(chosen.token)) },
    logprobs: { datatype: "FP32", shape: [1], data: Float32Array.of(chosen.logprob) },
    top_logprob_ids: chosen.top ? { datatype: "INT64", shape: [chosen.top.tokens.length], data: BigInt64Array.from(chosen.top.tokens, BigInt) } : { datatype: "INT64", shape: [0], data: NO_IDS },
    top_logprobs: chosen.top ? { datatype: "FP32", shape: [chosen.top.logprobs.length], data: Float32Array.from(chosen.top.logprobs) } : { datatype: "FP32", shape: [0], data: NO_FLOATS },
    finish_reason: finishTensor(finish),
  };
}

function promptTensors(entries: readonly SampledToken[], top: number, finish: FinishReason | undefined): ScheduledResult {
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
export function wholeTensors(events: readonly TokenEvent[]): ScheduledResult {
  const ids: bigint[] = [];
  const logprobs: number[] = [];
  let finish: FinishReason | undefined;
  for (const event of events) {
    if (event.kind === "token") {
      ids.push(BigInt(event.chosen.token));
      logprobs.push(event.chosen.logprob);
    }
    finish = event.finish ?? finish;
  }
  return {
    output_ids: { datatype: "INT64", shape: [ids.length], data: BigInt64Array.from(ids) },
    logprobs: { datatype: "FP32", shape: [logprobs.length], data: Float32Array.from(logprobs) },
    top_logprob_ids: { datatype: "INT64", shape: [0], data: NO_IDS },
    top_logprobs: { datatype: "FP32", shape: [0], data: NO_FLOATS },
    finish_reason: finishTensor(finish),
  };
}
