/**
 * OpenAI's completions and chat completions on a generator: the body read and checked
 * (openai-request.ts), admission as for every call (the model named in the body), one sequence per
 * prompt and per `n` on the lease (typed token events), tokens turned into text as they come, stop
 * strings applied on the text (a sequence that hits one is stopped: the scheduler frees it at its
 * next iteration), and the answer in OpenAI's shape — one JSON object, or chunks for Server-Sent
 * Events (the route frames them and ends with `[DONE]`).
 */
import { PushQueue, RuntimeError } from "../core/mod.ts";
import type { PromptRequest, SampledToken, TokenEvent } from "../core/mod.ts";
import type { Deployment, Lease } from "../lifecycle/mod.ts";
import type { TokenCodec } from "../tensor/mod.ts";
import { CallOptions } from "./call-options.ts";
import { admitTo, refuseDeclaredOversize, takeBody } from "./admission.ts";
import type { CallContext } from "./admission.ts";
import { OpenAiParamError, parseOpenAiBody, readGenerationRequest } from "./openai-request.ts";
import type { GenerationRequest } from "./openai-request.ts";
import type { DirectBody, HeaderLookup } from "./direct-body.ts";

export type OpenAiKind = "chat" | "completion";

/** A call's answer: the whole JSON object, or the chunks of a stream (each a JSON text). */
export type OpenAiAnswer = { stream: false; json: string } | { stream: true; chunks: AsyncGenerator<string, void, undefined> };

/** One choice as it is made: its text so far, what was sent of it, its tokens and logprobs. */
class Choice {
  readonly index: number;
  readonly #detokenizer: ReturnType<TokenCodec["detokenizer"]>;
  readonly #stops: readonly string[];
  readonly #holdBack: number;
  readonly #includeStop: boolean;
  text = "";
  sent = 0;
  tokens = 0;
  finish?: string;
  /** Each token's logprob and alternatives: the prompt's first (with echo and logprobs; its first token has none), then the generated ones. */
  readonly logprobs: { id: number; logprob: number | null; top: [number, number][] | null }[] = [];
  /** The prompt's text (echo) before the logprobs' tokens, where the prompt's tokens are not among them. */
  readonly #offset: number;
  readonly #prompt: readonly number[];

  constructor(index: number, codec: TokenCodec, request: GenerationRequest, prefix: string, prompt: readonly number[]) {
    this.index = index;
    this.#prompt = prompt;
    this.#offset = request.sampling.promptLogprobs === undefined ? prefix.length : 0;
    this.#detokenizer = codec.detokenizer();
    this.#stops = request.stops;
    this.#includeStop = request.includeStop;
    this.#holdBack = Math.max(0, ...request.stops.map((s) => s.length - 1));
    this.text = prefix;
  }

  /** Takes one event (a token, or the prompt's logprobs); true when a stop string ended the choice. */
  take(event: TokenEvent): boolean {
    const searchFrom = Math.max(0, this.text.length - this.#holdBack);
    // Logprobs as float32, as vLLM's (torch's) are, and as KServe's FP32 tensors carry them.
    const pairs = (top: SampledToken["top"]) => (top ? top.tokens.map((t, k): [number, number] => [t, Math.fround(top.logprobs[k]!)]) : []);
    if (event.kind === "prompt") {
      // The prompt's first token has nothing before it to be predicted from: no logprob (OpenAI's null).
      this.logprobs.push({ id: this.#prompt[0]!, logprob: null, top: null });
      event.entries.forEach((e, p) => this.logprobs.push({ id: this.#prompt[p + 1]!, logprob: Math.fround(e.logprob), top: pairs(e.top) }));
    } else {
      const { token, logprob, top } = event.chosen;
      this.tokens++;
      this.logprobs.push({ id: token, logprob: Math.fround(logprob), top: pairs(top) });
      this.text += this.#detokenizer.push(token);
    }
    if (event.finish) {
      this.text += this.#detokenizer.flush();
      this.finish = event.finish;
    }
    for (const stop of this.#stops) {
      const at = this.text.indexOf(stop, searchFrom);
      if (at < 0) continue;
      this.text = this.text.slice(0, this.#includeStop ? at + stop.length : at);
      this.finish = "stop";
      return true;
    }
    return false;
  }

  /** Where the logprobs' first token starts in the text: after the echoed prompt, unless the prompt's tokens are among them. */
  get logprobsOffset(): number {
    return this.#offset;
  }

  /** The text not sent yet that can be: all of it once finished, else all but what may start a stop string. */
  delta(): string {
    const end = this.finish ? this.text.length : Math.max(this.sent, this.text.length - this.#holdBack);
    const delta = this.text.slice(this.sent, end);
    this.sent = end;
    return delta;
  }
}

/** Admission for a body that names its model: the body first (bounded), then the lookup, rate limit and queue room. */
export async function admitOpenAi(ctx: CallContext, header: HeaderLookup, body: DirectBody, kind: "generation" | "embedding" = "generation"): Promise<{ lease: Lease; d: Deployment; parsed: ReturnType<typeof parseOpenAiBody> }> {
  const refused = refuseDeclaredOversize(header, body, ctx.maxInputBytes);
  if (refused) await refused;
  const parsed = parseOpenAiBody(await takeBody(header, body, ctx.maxInputBytes));
  const found = admitTo(ctx, parsed.model, undefined, header, body, (d) => {
    if (kind === "generation" && (!d.codec || !d.generation)) throw new RuntimeError("NOT_FOUND", `'${parsed.model}' is not a generator (a function with generation and a tokenizer): GET /v1/models lists them`);
    if (kind === "embedding" && (!d.codec || !d.config.embedding)) throw new RuntimeError("NOT_FOUND", `'${parsed.model}' is not an encoder (a function with embedding and a tokenizer): GET /v1/models lists them`);
  });
  const lease = found instanceof Promise ? await found : found;
  return { lease, d: lease.deployment, parsed };
}

/** One sequence per prompt and per n, each a stream on the call's lease. */
function startChoices(lease: Lease, request: GenerationRequest, body: DirectBody, prefixes: (prompt: number[]) => string) {
  const codec = lease.deployment.codec!;
  return request.prompts.flatMap((prompt, p) =>
    Array.from({ length: request.n }, (_, k) => {
      const choice = new Choice(p * request.n + k, codec, request, prefixes(prompt), prompt);
      const sampling = { ...request.sampling, ...(request.sampling.seed !== undefined ? { seed: (request.sampling.seed + k) >>> 0 } : {}) };
      const typed: PromptRequest = request.priority !== undefined ? { ids: prompt, sampling, priority: request.priority } : { ids: prompt, sampling };
      return { choice, events: lease.generate(typed, new CallOptions(body)) };
    }),
  );
}

type Run = ReturnType<typeof startChoices>[number];

/** Runs every choice to its end (a stop string stops its sequence); one failing stops the others (their sequences freed). */
async function runToEnd(runs: Run[]): Promise<void> {
  try {
    await Promise.all(
      runs.map(async ({ choice, events }) => {
        for await (const event of events) if (choice.take(event)) break;
      }),
    );
  } catch (error) {
    await Promise.allSettled(runs.map((r) => r.events.return()));
    throw error;
  }
}

export async function openAiCall(ctx: CallContext, kind: OpenAiKind, header: HeaderLookup, body: DirectBody): Promise<OpenAiAnswer> {
  const { lease, d, parsed } = await admitOpenAi(ctx, header, body);
  const codec = d.codec!;
  const chat = kind === "chat";
  const request = readGenerationRequest(parsed, codec, { chat, vocab: d.config.generation!.model!.vocab, maxModelLen: d.generation!.maxModelLen });
  const id = `${chat ? "chatcmpl" : "cmpl"}-${crypto.randomUUID().replaceAll("-", "")}`;
  const created = Math.floor(Date.now() / 1000);
  const head = { id, object: chat ? "chat.completion" : "text_completion", created, model: request.model };
  const promptTokens = request.prompts.reduce((n, p) => n + p.length, 0);
  const runs = startChoices(lease, request, body, (prompt) => (request.echo ? codec.decode(prompt) : ""));
  const usage = () => {
    const completion = runs.reduce((n, r) => n + r.choice.tokens, 0);
    return { prompt_tokens: promptTokens, completion_tokens: completion, total_tokens: promptTokens + completion };
  };
  const logprobsOf = (choice: Choice, from: number) => (request.logprobs ? formatLogprobs(choice, from, codec, chat) : null);
  if (!request.stream) {
    await runToEnd(runs);
    const choices = runs.map(({ choice }) => ({
      index: choice.index,
      ...(chat ? { message: { role: "assistant", content: choice.text } } : { text: choice.text }),
      logprobs: logprobsOf(choice, 0),
      finish_reason: choice.finish ?? "length",
    }));
    return { stream: false, json: JSON.stringify({ ...head, choices, usage: usage() }) };
  }
  const chunkHead = { ...head, object: chat ? "chat.completion.chunk" : "text_completion" };
  const chunk = (choice: Choice, delta: string, from: number, first: boolean) =>
    JSON.stringify({
      ...chunkHead,
      choices: [
        {
          index: choice.index,
          ...(chat ? { delta: first ? { role: "assistant", content: delta } : choice.finish && !delta ? {} : { content: delta } } : { text: delta }),
          logprobs: logprobsOf(choice, from),
          finish_reason: choice.finish ?? null,
        },
      ],
    });
  return { stream: true, chunks: interleave(runs, chunk, request.includeUsage ? () => JSON.stringify({ ...chunkHead, choices: [], usage: usage() }) : undefined) };
}

/**
 * Triton's generate extension on a generator, as Triton's vLLM backend answers it: `text_input`
 * the prompt; sampling fields at the top, in `parameters`, or as the JSON text `sampling_parameters`
 * (vLLM's names); `exclude_input_in_output`. Answers `text_output`: the prompt and the whole text
 * (generate), or each new piece (generate_stream).
 */
export async function generateOnGenerator(lease: Lease, body: Record<string, unknown>, source: DirectBody, stream: boolean): Promise<AsyncGenerator<string, void, undefined>> {
  const d = lease.deployment;
  const { text_input: text, parameters, sampling_parameters: sampling, exclude_input_in_output: exclude, stream: _stream, id, ...fields } = body;
  if (typeof text !== "string") throw new OpenAiParamError("text_input", "text_input: required, the prompt as a string");
  const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
  let extra: unknown = sampling ?? {};
  if (typeof sampling === "string") {
    try {
      extra = JSON.parse(sampling);
    } catch {
      extra = undefined;
    }
  }
  // vLLM's form is JSON text; an object as it is is taken too. Anything else is refused, not ignored.
  if (!isObject(extra)) throw new OpenAiParamError("sampling_parameters", "sampling_parameters: must be a JSON object as text (vLLM's sampling fields)");
  if (parameters !== undefined && !isObject(parameters)) throw new OpenAiParamError("parameters", "parameters: must be an object of sampling fields");
  const merged = { ...fields, ...parameters, ...extra, model: d.name, prompt: text, stream: false, n: 1 };
  const request = readGenerationRequest(merged, d.codec!, { chat: false, vocab: d.config.generation!.model!.vocab, maxModelLen: d.generation!.maxModelLen });
  const echo = !stream && exclude !== true;
  const [run] = startChoices(lease, request, source, () => (echo ? text : ""));
  const head = `{${typeof id === "string" ? `"id":${JSON.stringify(id)},` : ""}"model_name":${JSON.stringify(d.name)},"model_version":${JSON.stringify(String(d.version))}`;
  const event = (piece: string) => `${head},"text_output":${JSON.stringify(piece)}}`;
  if (!stream) {
    await runToEnd([run!]);
    return (async function* () {
      yield event(run!.choice.text);
    })();
  }
  return interleave([run!], (_, delta) => event(delta));
}

/** Every choice's chunks in the order they are made; usage last when asked. A consumer that stops stops every choice. */
async function* interleave(
  runs: Run[],
  chunk: (choice: Choice, delta: string, from: number, first: boolean) => string,
  usage?: () => string,
): AsyncGenerator<string, void, undefined> {
  const ready = new PushQueue<string>();
  let live = runs.length;
  const pump = async ({ choice, events }: (typeof runs)[number]) => {
    let first = true;
    try {
      for await (const event of events) {
        const from = choice.logprobs.length;
        const stopped = choice.take(event);
        const delta = choice.delta();
        if (delta || first || choice.finish) ready.push(chunk(choice, delta, from, first));
        first = false;
        if (stopped) break;
      }
    } catch (error) {
      ready.end(error); // the first failure ends the stream, after what was made before it
    } finally {
      if (--live === 0) ready.end();
    }
  };
  const pumps = runs.map(pump);
  if (runs.length === 0) ready.end();
  try {
    yield* ready.read();
    if (usage) yield usage();
  } finally {
    await Promise.all(runs.map((r) => r.events.return()));
    await Promise.allSettled(pumps);
  }
}

/**
 * A choice's logprobs from entry `from` on, in OpenAI's shape: chat's `content` list, or
 * completions' parallel lists, whose `text_offset` counts from the start of the choice's text
 * (the echoed prompt's included) whichever chunk of a stream carries them.
 */
function formatLogprobs(choice: Choice, from: number, codec: TokenCodec, chat: boolean) {
  const token = (id: number) => codec.decode([id], { skipSpecialTokens: false });
  const entries = choice.logprobs.slice(from);
  if (chat) {
    const item = (id: number, logprob: number) => {
      const text = token(id);
      return { token: text, logprob, bytes: [...new TextEncoder().encode(text)] };
    };
    return { content: entries.map((e) => ({ ...item(e.id, e.logprob!), top_logprobs: (e.top ?? []).map(([t, lp]) => item(t, lp)) })) };
  }
  let offset = choice.logprobsOffset;
  for (const e of choice.logprobs.slice(0, from)) offset += token(e.id).length;
  const textOffset: number[] = [];
  const tokens = entries.map((e) => {
    const text = token(e.id);
    textOffset.push(offset);
    offset += text.length;
    return text;
  });
  return {
    tokens,
    token_logprobs: entries.map((e) => e.logprob),
    top_logprobs: entries.map((e) => (e.top ? Object.fromEntries(e.top.map(([t, lp]) => [token(t), lp])) : null)),
    text_offset: textOffset,
  };
}

/** `GET /v1/models`: every generator and encoder function, as OpenAI lists models. */
export function openAiModels(ctx: CallContext): string {
  const created = Math.floor(Date.now() / 1000);
  const data = ctx.models.openAiModels().map((name) => ({ id: name, object: "model", created, owned_by: "tensorfn" }));
  return JSON.stringify({ object: "list", data });
}
