import { invalidArg, readSampling, shownJson } from "../../core/mod.ts";
import type { Parameters, SamplingParams } from "../../core/mod.ts";

/**
 * A generator's sampling from a KServe (HTTP or gRPC) request's parameters — the fields of
 * SAMPLING_FIELDS (core/sampling-fields.ts: `max_tokens`, `temperature`, `top_p`, `top_k`, `min_p`,
 * `seed`, the penalties, `min_tokens`, `top_logprobs`) and `ignore_eos` — over `defaults` (greedy,
 * the generator's generation_config.json, its default max_tokens) where they are silent; a value
 * out of range is a 400 naming it. The OpenAI routes read the same table from their bodies
 * (call/openai-request.ts) and hand the scheduler a finished `SamplingParams`.
 */
export function samplingFromParameters(parameters: Parameters | undefined, defaults: SamplingParams): SamplingParams {
  if (!parameters) return defaults;
  const sampling = readSampling(defaults, (name) => parameters[name], (name, expected, value) => {
    throw invalidArg(`request parameter '${name}' must be ${expected}, got ${shownJson(value)}`);
  });
  const ignoreEos = parameters.ignore_eos;
  if (ignoreEos !== undefined) {
    if (typeof ignoreEos !== "boolean") throw invalidArg(`request parameter 'ignore_eos' must be true or false, got ${JSON.stringify(ignoreEos)}`);
    sampling.ignoreEos = ignoreEos;
  }
  return sampling;
}
