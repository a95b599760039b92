import type { ErrorCode, MetricLabels, MetricSpec, ModelSignature, Tensor } from "../core/mod.ts";
import type { FunctionConfig } from "../config/mod.ts";
import type { LoadOptions } from "../backends/backend.ts";
import type { HandlerOutcome, HandlerStep } from "./handler-host.ts";

/** What a function process needs to host a `backend: handler` function's handler. */
export interface HandlerSpec {
  name: string;
  version: number;
  /** The handler module's resolved path, inside `folder`. */
  path: string;
  /** The function's folder, resolved: `ctx.readFile` reads inside it. */
  folder: string;
  /** The registration's tag (a reload imports the new code). */
  tag: string;
  timeoutMs: number;
  /** `compute` with declared tensors (else `execute` on request bodies). */
  tensors: boolean;
  batching: boolean;
}

/** The part of LoadOptions that crosses to the process (no functions; it runs its sessions on its own thread). */
export type PortableLoadOptions = Omit<LoadOptions, "log" | "executionThread" | "saveOptimizedTo">;

export function portable(options: LoadOptions): PortableLoadOptions {
  const { log: _log, executionThread: _thread, saveOptimizedTo: _save, ...rest } = options;
  return rest;
}

/** Server → function process; `id` pairs each with its reply. */
export type ProcessRequest =
  | { id: number; op: "load"; kind: "onnxruntime"; model: Uint8Array; options: PortableLoadOptions }
  | { id: number; op: "load"; kind: "handler"; options: PortableLoadOptions; handler: HandlerSpec }
  /** `config`: the function's effective config, with the first run of a handler (its `ctx.config`). */
  | { id: number; op: "run"; session: number; feeds: Record<string, Tensor>; outputs?: readonly string[]; config?: FunctionConfig }
  | { id: number; op: "release"; session: number }
  /** The answer to the process's `ctx.infer` call `call` (a ProcessNotice asked it). */
  | { id: 0; op: "answer"; call: number; outputs?: Record<string, Tensor>; error?: string; code?: ErrorCode; status?: number };

/** A handler call the process made, for the server's counters (`tensorfn_handler_calls_total`). */
export type HandlerCall = [step: HandlerStep, ms: number, outcome: HandlerOutcome];

/**
 * What a handler did with `ctx.metrics` in the process, replayed on the server's registry (which
 * `/metrics` serves): a declaration once per metric, then each update.
 */
export type MetricEvent =
  | { declare: "counter" | "gauge" | "histogram"; spec: MetricSpec & { buckets?: readonly number[] } }
  | { name: string; method: "inc" | "dec" | "set" | "observe"; labels?: MetricLabels; value?: number };

/** Function process → server. An error keeps its code and status, so it maps to the same HTTP answer. */
export type ProcessReply =
  | {
      id: number;
      ok: true;
      session?: number;
      signature?: ModelSignature;
      provider?: string;
      fallbackReason?: string;
      optionsNotApplied?: string;
      outputs?: Record<string, Tensor>;
      calls?: HandlerCall[];
      metrics?: MetricEvent[];
    }
  | { id: number; ok: false; error: string; code: ErrorCode; status?: number; calls?: HandlerCall[]; metrics?: MetricEvent[] };

/**
 * Function process → server, unasked (id 0): metric updates a handler made outside any call (a
 * timer), or a handler's `ctx.infer` call `call`, which the server runs and answers with "answer".
 */
export type ProcessNotice =
  | { id: 0; metrics: MetricEvent[]; infer?: undefined }
  | { id: 0; metrics?: MetricEvent[]; infer: { call: number; target: string; inputs: Record<string, Tensor>; outputs?: readonly string[] } };
