/**
 * OpenAI's `/v1/completions` and `/v1/chat/completions` bodies read into what a generator runs:
 * prompts as token ids and the sampling parameters (OpenAI's, and vLLM's extra ones: top_k, min_p,
 * repetition_penalty, stop_token_ids, ignore_eos, min_tokens, priority). Every field is checked
 * before anything runs; an error names the field (OpenAI's `param`).
 */
import { DEFAULT_MAX_TOKENS, GREEDY, readSampling, RuntimeError, SAMPLING_FIELDS, shownJson } from "../core/mod.ts";
import type { SamplingFieldName, SamplingParams } from "../core/mod.ts";
import type { ChatMessage, TokenCodec } from "../tensor/mod.ts";

/** A request's mistake, with the field it is about (OpenAI's error `param`). */
export class OpenAiParamError extends RuntimeError {
  readonly param: string;
  constructor(param: string, message: string) {
    super("INVALID_ARG", message);
    this.param = param;
  }
}

/** A field's mistake, its message headed by the field. */
export const paramError = (param: string, message: string) => new OpenAiParamError(param, `${param}: ${message}`);
const bad = paramError;

/** Stop strings, prompts per request and n at most: each costs a sequence or a scan per token. */
export const OPENAI_LIMITS = { stops: 16, stopLength: 256, prompts: 64, n: 16, logitBias: 1024 } as const;

/** The shared sampling fields an OpenAI body sets as they are (max_tokens and top_logprobs have OpenAI's own rules). */
const OPENAI_SAMPLING_FIELDS = ["temperature", "top_p", "top_k", "min_p", "seed", "repetition_penalty", "presence_penalty", "frequency_penalty", "min_tokens"] as const satisfies readonly SamplingFieldName[];

export interface GenerationRequest {
  model: string;
  /** Each prompt's token ids; a choice per prompt and per n, in that order (OpenAI's indexes). */
  prompts: number[][];
  n: number;
  sampling: SamplingParams;
  stops: string[];
  stream: boolean;
  includeUsage: boolean;
  /** Completions: logprobs (0–5 alternatives); chat: logprobs true with top_logprobs. */
  logprobs: boolean;
  /** Completions' `echo`: the prompt's text before the completion. */
  echo: boolean;
  priority?: number;
  /** The stop strings and end-of-sequence tokens stay in the text (vLLM's include_stop_str_in_output). */
  includeStop: boolean;
  skipSpecialTokens: boolean;
}

type Body = Record<string, unknown>;

/** The JSON object a body holds; the model it names. */
export function parseOpenAiBody(bytes: Uint8Array): Body & { model: string } {
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(bytes));
  } catch (error) {
    throw new OpenAiParamError("", `the body is not JSON: ${(error as Error).message}`);
  }
  if (!body || typeof body !== "object" || Array.isArray(body)) throw new OpenAiParamError("", "the body must be a JSON object");
  const model = (body as Body).model;
  if (typeof model !== "string" || model.length === 0) throw bad("model", "required: the name of a generator or encoder function (GET /v1/models lists them)");
  return body as Body & { model: string };
}

const integer = (body: Body, key: string, min: number, max: number, fallback?: number): number | undefined => {
  const value = body[key];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) throw bad(key, `must be an integer from ${min} to ${max}, not ${shownJson(value)}`);
  return value;
};
const flag = (body: Body, key: string, fallback: boolean): boolean => {
  const value = body[key];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "boolean") throw bad(key, `must be true or false, not ${JSON.stringify(value)}`);
  return value;
};

/**
 * Characters a prompt may have per token of the model's length, checked before tokenizing: no
 * tokenizer packs more into a token on average, so a longer text cannot fit and is refused unread.
 */
const CHARS_PER_TOKEN = 32;

/** Text to tokenize, refused at once where it could not fit the model's length (a prompt, an input to embed). */
export function encodeText(codec: TokenCodec, text: string, param: string, maxModelLen: number, options?: { addSpecialTokens?: boolean }): number[] {
  if (text.length > maxModelLen * CHARS_PER_TOKEN) throw bad(param, `${text.length} characters cannot fit the model's length of ${maxModelLen} tokens`);
  return codec.encode(text, options);
}

/** A list of token ids, each checked against the vocabulary. */
export function tokenIds(list: unknown[], param: string, vocab: number): number[] {
  if (list.length === 0) throw bad(param, "is empty");
  list.forEach((t, i) => {
    if (typeof t !== "number" || !Number.isInteger(t) || t < 0 || t >= vocab) throw bad(`${param}[${i}]`, `must be a token id from 0 to ${vocab - 1}, not ${JSON.stringify(t)}`);
  });
  return list as number[];
}

/** A completions body's prompts: a string, strings, token ids, or lists of token ids. */
function completionPrompts(body: Body, codec: TokenCodec, vocab: number, maxModelLen: number): number[][] {
  const prompt = body.prompt;
  const ids = (list: unknown[], param: string) => tokenIds(list, param, vocab);
  if (typeof prompt === "string") return [encodeText(codec, prompt, "prompt", maxModelLen)];
  if (!Array.isArray(prompt) || prompt.length === 0) throw bad("prompt", "required: a string, a list of strings, or token ids");
  if (prompt.length > OPENAI_LIMITS.prompts && typeof prompt[0] !== "number") throw bad("prompt", `at most ${OPENAI_LIMITS.prompts} prompts per request`);
  if (typeof prompt[0] === "number") return [ids(prompt, "prompt")];
  return prompt.map((p, i) => {
    if (typeof p === "string") return encodeText(codec, p, `prompt[${i}]`, maxModelLen);
    if (Array.isArray(p)) return ids(p, `prompt[${i}]`);
    throw bad(`prompt[${i}]`, "must be a string or a list of token ids");
  });
}

/** A chat body's messages as the chat template takes them; content parts of type text joined. */
function chatMessages(body: Body): ChatMessage[] {
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) throw bad("messages", "required: a non-empty list of {role, content}");
  return messages.map((m, i) => {
    if (!m || typeof m !== "object") throw bad(`messages[${i}]`, "must be an object with role and content");
    const { role, content, name } = m as Body;
    if (typeof role !== "string" || !["system", "developer", "user", "assistant", "tool"].includes(role)) throw bad(`messages[${i}].role`, `must be system, developer, user, assistant or tool, not ${JSON.stringify(role)}`);
    let text: string;
    if (typeof content === "string") text = content;
    else if (content === null || content === undefined) text = "";
    else if (Array.isArray(content)) {
      text = content
        .map((part, j) => {
          if (part && typeof part === "object" && (part as Body).type === "text" && typeof (part as Body).text === "string") return (part as Body).text as string;
          throw bad(`messages[${i}].content[${j}]`, "only text parts ({type: 'text', text}) are understood by a text model");
        })
        .join("");
    } else throw bad(`messages[${i}].content`, "must be a string or a list of text parts");
    return { role, content: text, ...(typeof name === "string" ? { name } : {}) };
  });
}

/**
 * Reads a completions (`chat` false) or chat body against the generator's tokenizer: prompts as
 * token ids, sampling as the scheduler takes it (the tokenizer's generation defaults where the body is silent).
 */
export function readGenerationRequest(body: Body & { model: string }, codec: TokenCodec, options: { chat: boolean; vocab: number; maxModelLen: number }): GenerationRequest {
  const { chat, vocab } = options;
  // A client's request for what the generators cannot do is a 400 naming the field, as vLLM answers
  // it: OpenAI's clients retry a 5xx (twice, with back-off) for an answer that cannot change.
  for (const key of ["tools", "functions", "function_call", "response_format", "suffix", "best_of", "prompt_logprobs", "guided_json", "guided_regex", "guided_choice", "guided_grammar"]) {
    const value = body[key];
    const neutral = value === undefined || value === null || (key === "best_of" && value === 1) || (key === "tools" && Array.isArray(value) && value.length === 0) || (key === "response_format" && (value as Body).type === "text");
    if (!neutral) throw bad(key, "is not supported by tensorfn's generators yet");
  }
  const choice = body.tool_choice;
  if (choice !== undefined && choice !== null && choice !== "none" && choice !== "auto") throw bad("tool_choice", "is not supported by tensorfn's generators yet (only none, or auto with no tools)");
  const prompts = chat ? [encodeText(codec, codec.chatPrompt(chatMessages(body)), "messages", options.maxModelLen, { addSpecialTokens: false })] : completionPrompts(body, codec, vocab, options.maxModelLen);
  const longest = Math.max(...prompts.map((p) => p.length));
  const room = options.maxModelLen - longest;
  if (room < 1) throw bad(chat ? "messages" : "prompt", `${longest} tokens leave no room to generate within the model's ${options.maxModelLen}`);
  const echo = !chat && flag(body, "echo", false);
  // With echo, 0 tokens is a question about the prompt alone (its logprobs: how evaluation harnesses score text).
  const most = SAMPLING_FIELDS.max_tokens.max;
  const requested = integer(body, "max_completion_tokens", 1, most) ?? integer(body, "max_tokens", echo ? 0 : 1, most);
  // OpenAI's completions default to 16 tokens; chat (as vLLM) to what the model's length leaves.
  const maxTokens = requested ?? (chat ? room : Math.min(DEFAULT_MAX_TOKENS, room));
  let topLogprobs = 0;
  let logprobs = false;
  if (chat) {
    logprobs = flag(body, "logprobs", false);
    topLogprobs = integer(body, "top_logprobs", 0, SAMPLING_FIELDS.top_logprobs.max, 0)!;
    if (topLogprobs > 0 && !logprobs) throw bad("top_logprobs", "needs logprobs: true");
  } else {
    const count = integer(body, "logprobs", 0, 5);
    logprobs = count !== undefined;
    topLogprobs = count ?? 0;
  }
  const stop = body.stop;
  const stops = stop === undefined || stop === null ? [] : typeof stop === "string" ? [stop] : Array.isArray(stop) && stop.every((s) => typeof s === "string") ? (stop as string[]) : undefined;
  if (!stops) throw bad("stop", "must be a string or a list of strings");
  if (stops.length > OPENAI_LIMITS.stops || stops.some((s) => s.length === 0 || s.length > OPENAI_LIMITS.stopLength)) throw bad("stop", `at most ${OPENAI_LIMITS.stops} strings of 1 to ${OPENAI_LIMITS.stopLength} characters`);
  const stopTokenIds = body.stop_token_ids ?? [];
  if (!Array.isArray(stopTokenIds) || stopTokenIds.length > OPENAI_LIMITS.stops || stopTokenIds.some((t) => !Number.isInteger(t) || t < 0 || t >= vocab)) throw bad("stop_token_ids", `must be at most ${OPENAI_LIMITS.stops} token ids below ${vocab}`);
  const logitBias = new Map<number, number>();
  const bias = body.logit_bias;
  if (bias !== undefined && bias !== null) {
    if (typeof bias !== "object" || Array.isArray(bias)) throw bad("logit_bias", "must be an object of token id → bias");
    const entries = Object.entries(bias as Body);
    if (entries.length > OPENAI_LIMITS.logitBias) throw bad("logit_bias", `at most ${OPENAI_LIMITS.logitBias} tokens`);
    for (const [key, value] of entries) {
      const token = Number(key);
      if (!/^\d+$/.test(key) || token >= vocab) throw bad(`logit_bias.${key}`, `must name a token id below ${vocab}`);
      if (typeof value !== "number" || value < -100 || value > 100) throw bad(`logit_bias.${key}`, "must be a number from -100 to 100");
      logitBias.set(token, value);
    }
  }
  const streamOptions = body.stream_options;
  if (streamOptions !== undefined && streamOptions !== null && (typeof streamOptions !== "object" || Array.isArray(streamOptions))) throw bad("stream_options", "must be an object");
  const stream = flag(body, "stream", false);
  const includeUsage = stream && flag((streamOptions ?? {}) as Body, "include_usage", false);
  // The shared table's fields (core/sampling-fields.ts) over OpenAI's defaults (temperature 1, where
  // greedy is KServe's) and the generator's generation_config.json; max_tokens and the logprobs are OpenAI's own above.
  const base: SamplingParams = { ...GREEDY, temperature: 1, ...codec.samplingDefaults };
  const fields = readSampling(base, (name) => body[name], (name, expected, value) => {
    throw bad(name, `must be ${expected}, not ${shownJson(value)}`);
  }, OPENAI_SAMPLING_FIELDS);
  const sampling: SamplingParams = {
    ...fields,
    maxTokens: Math.min(maxTokens, room),
    stopTokenIds: stopTokenIds as number[],
    ignoreEos: flag(body, "ignore_eos", false),
    topLogprobs,
    logprobs,
    // Completions' echo with logprobs: the prompt's tokens come with theirs, as OpenAI's and vLLM's do.
    ...(echo && logprobs ? { promptLogprobs: topLogprobs } : {}),
    ...(logitBias.size > 0 ? { logitBias } : {}),
  };
  if (requested !== undefined && requested > room) throw bad(requested === body.max_tokens ? "max_tokens" : "max_completion_tokens", `${requested} tokens after a prompt of ${longest} exceed the model's length of ${options.maxModelLen}`);
  const n = integer(body, "n", 1, OPENAI_LIMITS.n, 1)!;
  if (n * prompts.length > OPENAI_LIMITS.prompts) throw bad("n", `n × prompts is at most ${OPENAI_LIMITS.prompts}`);
  const priority = integer(body, "priority", 0, 1 << 20);
  return {
    model: body.model,
    prompts,
    n,
    sampling,
    stops,
    stream,
    includeUsage,
    logprobs,
    echo,
    includeStop: flag(body, "include_stop_str_in_output", false),
    skipSpecialTokens: flag(body, "skip_special_tokens", true),
    ...(priority !== undefined ? { priority } : {}),
  };
}
