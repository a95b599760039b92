import type { SamplingParams } from "./generation.ts";

/** A numeric sampling field: where it goes in SamplingParams and what a request may give it. */
interface SamplingField {
  key: keyof SamplingParams;
  min: number;
  max: number;
  /** The value must be an integer. */
  integer?: boolean;
  /** `min` itself is excluded (top_p, repetition_penalty: above 0). */
  aboveMin?: boolean;
}

/**
 * The numeric sampling fields, by the names requests give them (OpenAI's and vLLM's), with their
 * ranges: one table for every protocol — OpenAI bodies, Triton's generate, KServe and gRPC
 * parameters — and for generation_config.json's defaults. `top_k` −1 means all tokens (vLLM's
 * "off"), as 0 does; a `seed` is any safe integer, wrapped to 32 bits (OpenAI's clients send
 * negative and 64-bit ones).
 */
export const SAMPLING_FIELDS = {
  max_tokens: { key: "maxTokens", min: 1, max: 2 ** 24, integer: true },
  temperature: { key: "temperature", min: 0, max: 2 },
  top_p: { key: "topP", min: 0, max: 1, aboveMin: true },
  top_k: { key: "topK", min: -1, max: 2 ** 20, integer: true },
  min_p: { key: "minP", min: 0, max: 1 },
  seed: { key: "seed", min: -(2 ** 53) + 1, max: 2 ** 53 - 1, integer: true },
  repetition_penalty: { key: "repetitionPenalty", min: 0, max: 10, aboveMin: true },
  presence_penalty: { key: "presencePenalty", min: -2, max: 2 },
  frequency_penalty: { key: "frequencyPenalty", min: -2, max: 2 },
  min_tokens: { key: "minTokens", min: 0, max: 2 ** 24, integer: true },
  top_logprobs: { key: "topLogprobs", min: 0, max: 20, integer: true },
} as const satisfies Record<string, SamplingField>;

export type SamplingFieldName = keyof typeof SAMPLING_FIELDS;

/** The fields generation_config.json may set as a generator's defaults (vLLM's `--generation-config auto`). */
export const GENERATION_CONFIG_FIELDS = ["temperature", "top_p", "top_k", "min_p", "repetition_penalty"] as const satisfies readonly SamplingFieldName[];

/** Whether `value` is one `name` accepts. */
export function acceptsSampling(name: SamplingFieldName, value: unknown): value is number {
  const field: SamplingField = SAMPLING_FIELDS[name];
  return typeof value === "number" && Number.isFinite(value) && (field.aboveMin ? value > field.min : value >= field.min) && value <= field.max && (!field.integer || Number.isInteger(value));
}

/** What `name` accepts, as an error says it: "an integer from -1 to 1048576", "a number above 0 up to 1". */
export function samplingRange(name: SamplingFieldName): string {
  const field: SamplingField = SAMPLING_FIELDS[name];
  const kind = field.integer ? "an integer" : "a number";
  return field.aboveMin ? `${kind} above ${field.min} up to ${field.max}` : `${kind} from ${field.min} to ${field.max}`;
}

/** An accepted value as SamplingParams holds it: top_k −1 as 0, a seed wrapped to 32 bits. */
export function storedSampling(name: SamplingFieldName, value: number): number {
  if (name === "top_k") return Math.max(0, value);
  if (name === "seed") return value >>> 0;
  return value;
}

/**
 * `base` with the sampling fields a request gives: `read(name)` is the request's raw value
 * (undefined or null: not given), `refuse(name, expected, value)` throws the protocol's error for
 * a value out of range. `only` limits the fields read (a protocol that reads some itself).
 */
export function readSampling(
  base: SamplingParams,
  read: (name: SamplingFieldName) => unknown,
  refuse: (name: SamplingFieldName, expected: string, value: unknown) => never,
  only?: readonly SamplingFieldName[],
): SamplingParams {
  const sampling = { ...base } as Record<keyof SamplingParams, unknown>;
  for (const name of only ?? (Object.keys(SAMPLING_FIELDS) as SamplingFieldName[])) {
    const value = read(name);
    if (value === undefined || value === null) continue;
    if (!acceptsSampling(name, value)) refuse(name, samplingRange(name), value);
    sampling[SAMPLING_FIELDS[name].key] = storedSampling(name, value);
  }
  return sampling as unknown as SamplingParams;
}

/** The defaults generation_config.json sets (its fields in range; others ignored), as SamplingParams fields. */
export function generationConfigDefaults(generation: Record<string, unknown>): Partial<SamplingParams> {
  const defaults: Record<string, number> = {};
  for (const name of GENERATION_CONFIG_FIELDS) {
    const value = generation[name];
    if (acceptsSampling(name, value)) defaults[SAMPLING_FIELDS[name].key] = storedSampling(name, value);
  }
  return defaults as Partial<SamplingParams>;
}
