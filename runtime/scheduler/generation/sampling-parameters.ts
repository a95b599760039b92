import { GREEDY, invalidArg, shownJson } from "../../core/mod.ts";
import type { Parameters, SamplingParams } from "../../core/mod.ts";

/** Request parameters that set a KServe or gRPC request's sampling, with their ranges (vLLM's names). */
const NUMBERS = {
  max_tokens: ["maxTokens", 1, 2 ** 24, true],
  temperature: ["temperature", 0, 2, false],
  top_p: ["topP", Number.MIN_VALUE, 1, false],
  top_k: ["topK", 0, 2 ** 20, true],
  min_p: ["minP", 0, 1, false],
  seed: ["seed", 0, 2 ** 32 - 1, true],
  repetition_penalty: ["repetitionPenalty", Number.MIN_VALUE, 10, false],
  presence_penalty: ["presencePenalty", -2, 2, false],
  frequency_penalty: ["frequencyPenalty", -2, 2, false],
  min_tokens: ["minTokens", 0, 2 ** 24, true],
  top_logprobs: ["topLogprobs", 0, 20, true],
} as const;

/**
 * A generator's sampling from a KServe (HTTP or gRPC) request's parameters — `max_tokens`,
 * `temperature`, `top_p`, `top_k`, `min_p`, `seed`, `repetition_penalty`, `presence_penalty`,
 * `frequency_penalty`, `min_tokens`, `top_logprobs`, `ignore_eos` — greedy and `defaultMaxTokens`
 * where they are silent; a value out of range is a 400 naming it. The OpenAI routes read their own
 * bodies (call/openai-request.ts) and hand the scheduler a finished `SamplingParams`.
 */
export function samplingFromParameters(parameters: Parameters | undefined, defaultMaxTokens: number): SamplingParams {
  const sampling: SamplingParams = { ...GREEDY, maxTokens: defaultMaxTokens };
  if (!parameters) return sampling;
  const writable = sampling as unknown as Record<string, number | boolean>;
  for (const [name, [field, min, max, whole]] of Object.entries(NUMBERS)) {
    const value = parameters[name];
    if (value === undefined) continue;
    if (typeof value !== "number" || !(value >= min && value <= max) || (whole && !Number.isInteger(value))) {
      throw invalidArg(`request parameter '${name}' must be ${whole ? "an integer" : "a number"} from ${min === Number.MIN_VALUE ? "above 0" : min} to ${max}, got ${shownJson(value)}`);
    }
    writable[field] = value;
  }
  const ignoreEos = parameters.ignore_eos;
  if (ignoreEos !== undefined) {
    if (typeof ignoreEos !== "boolean") throw invalidArg(`request parameter 'ignore_eos' must be true or false, got ${JSON.stringify(ignoreEos)}`);
    sampling.ignoreEos = ignoreEos;
  }
  return sampling;
}
