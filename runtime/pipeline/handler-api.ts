import type { FunctionConfig } from "../config/mod.ts";
import type { HandlerMetrics, Logger, Tensor } from "../core/mod.ts";

/** One call of a function as its handler sees it: the HTTP body as it came, and its media type. */
export interface FunctionRequest {
  readonly body: Uint8Array;
  /** The request's Content-Type ("" when it had none). */
  readonly contentType: string;
  /** Aborts when this request's client goes away (ctx.signal aborts once every request of the call is gone). */
  readonly signal: AbortSignal;
  /** The body as UTF-8 text. */
  text(): string;
  /** The body parsed as JSON; a body that is not JSON is the client's error (400). */
  json<T = unknown>(): T;
}

/**
 * What a handler may use, and nothing else: its function's effective config and parameters, a
 * logger, a clock, and a signal that aborts when the call runs past `handler_timeout_ms`, the
 * function unloads, or every client the call answers has gone away.
 */
export interface HandlerContext {
  readonly name: string;
  readonly version: number;
  readonly config: FunctionConfig;
  /** `parameters` of function.yaml, as plain strings. */
  readonly parameters: Readonly<Record<string, string>>;
  readonly log: Logger;
  /** Milliseconds on the server's clock (monotonic). */
  now(): number;
  readonly signal: AbortSignal;
  /** `throw ctx.error("send {text}")`: the client's mistake, a 4xx (default 400); the same as HandlerError, without an import. */
  error(message: string, status?: number): HandlerError;
  /** An answer with its own media type, as `reply()`, without an import. */
  reply(body: Uint8Array | string, contentType: string): FunctionReply;
  /**
   * Runs another function (Triton's BLS) through its own queue and batcher, with tensors in and
   * out, as `POST /v2/models/{name}/infer` would (its latest READY version, loaded on demand).
   * `outputs` names the ones you need, as a request's `outputs` does: a model copies out only
   * those (the answer holds at least them); without it, every output.
   */
  infer(name: string, inputs: Record<string, Tensor>, options?: { outputs?: readonly string[] }): Promise<Record<string, Tensor>>;
  /**
   * A file of the function's own folder (a labels file, a dictionary), by its path relative to
   * the folder (`"labels.txt"`, `"assets/vocab.txt"`). A path that leaves the folder, through `..`
   * or a symlink, is refused as if the file did not exist.
   */
  readFile(path: string): Promise<Uint8Array>;
  /**
   * The function's own Prometheus metrics, served on `/metrics` (prom-client's counters, gauges and
   * histograms; tensorfn adds the `model` label): declare them in `initialize`, update them anywhere.
   */
  readonly metrics: HandlerMetrics;
}

/** A body with its media type, for an answer that is not JSON (see `reply`). */
export interface FunctionReply {
  readonly [REPLY]: true;
  readonly body: Uint8Array;
  readonly contentType: string;
}

/**
 * An answer: `reply(bytes, type)` for a body of your own, a `Uint8Array` (sent as
 * application/octet-stream), or any other value, sent as JSON.
 */
export type FunctionAnswer = FunctionReply | Uint8Array | unknown;

/**
 * The module a function's `handler:` names. `backend: handler` needs `execute`, given the
 * requests the scheduler batched (one, unless the function sets `max_batch_size` and
 * `dynamic_batching`), answering each in order. Around a model, `POST /v1/functions/{name}` needs
 * `preprocess`; `postprocess` is optional. The rest is optional everywhere.
 */
export interface Handler {
  /** Once, before the first call (after the module is imported on first use). */
  initialize?(ctx: HandlerContext): void | Promise<void>;
  execute?(requests: FunctionRequest[], ctx: HandlerContext): FunctionAnswer[] | Promise<FunctionAnswer[]>;
  /**
   * `backend: handler` that lists `input` and `output`: a model written in TypeScript. Takes the
   * inputs by name and returns every declared output, checked like a model's. When the function
   * batches, each tensor carries the batch dimension first (the rows of every request the batcher
   * gathered) and each output must have as many rows. Ensembles, ctx.infer and the KServe route call it.
   */
  compute?(inputs: Record<string, Tensor>, ctx: HandlerContext): Record<string, Tensor> | Promise<Record<string, Tensor>>;
  /** Around a model: the body → the model's input tensors (by input name; validated like any request's). */
  preprocess?(request: FunctionRequest, ctx: HandlerContext): Record<string, Tensor> | Promise<Record<string, Tensor>>;
  /** Around a model: its outputs (all of them, by name) → the answer. Absent: the outputs as JSON tensors. */
  postprocess?(outputs: Record<string, Tensor>, request: FunctionRequest, ctx: HandlerContext): FunctionAnswer | Promise<FunctionAnswer>;
  /** Once, when the function unloads or parks, if it was initialized. */
  finalize?(ctx: HandlerContext): void | Promise<void>;
  /**
   * With `sequence_batching`: a sequence started (its `sequence_start` request arrived), ended (its
   * `sequence_end` request ran), was released after `max_sequence_idle_microseconds` without a
   * request (`idle`), or was started over by a new `sequence_start` (`restart`). Not awaited: the
   * sequence's requests do not wait for it; a failure is logged.
   */
  onSequence?(event: SequenceHookEvent, ctx: HandlerContext): void | Promise<void>;
}

/** What `onSequence` is told. */
export interface SequenceHookEvent {
  event: "start" | "end" | "idle" | "restart";
  /** The sequence's id, as its requests' `sequence_id` gave it. */
  id: number | string;
}

const REPLY = Symbol.for("tensorfn.reply");

/** An answer with its own media type (an image, text): `return [reply(png, "image/png")]`. */
export function reply(body: Uint8Array | string, contentType: string): FunctionReply {
  return { [REPLY]: true, body: typeof body === "string" ? new TextEncoder().encode(body) : body, contentType };
}

export function isReply(value: unknown): value is FunctionReply {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[REPLY] === true;
}

/**
 * An error a handler throws to refuse a request as the client's fault: it becomes that 4xx
 * status with `{"error": "function '<name>' execute: <message>"}`. Anything else a handler throws
 * is a 500 naming the function and the step.
 */
export class HandlerError extends Error {
  readonly status: number;
  constructor(message: string, status = 400) {
    super(message);
    this.name = "HandlerError";
    this.status = status >= 400 && status <= 499 ? status : 400;
  }
}
