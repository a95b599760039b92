import type { ModelSignature } from "../core/mod.ts";
import type { FunctionConfig, TensorConfig } from "./function-config.ts";
import type { DeclaredConfig } from "./declared-config.ts";

/**
 * The tensors a `backend: handler` function takes and gives on the KServe route: each request's
 * body and its media type, one BYTES element each (per batch row). `POST /v1/functions/{name}`
 * fills them from the HTTP body and Content-Type, and answers with the body the handler returned.
 */
export const HANDLER_TENSORS = { body: "body", contentType: "content_type" } as const;

const carriers = (): TensorConfig[] => [
  { name: HANDLER_TENSORS.body, data_type: "TYPE_STRING", dims: [1], optional: false },
  { name: HANDLER_TENSORS.contentType, data_type: "TYPE_STRING", dims: [1], optional: false },
];

/**
 * Completes a `backend: handler` config: there is no model, the inputs and outputs are the two
 * carrier tensors, and an omitted `max_batch_size` is 0 (each request alone; set it, with
 * `dynamic_batching`, to hand `execute` several requests at once).
 */
export function completeHandlerConfig(declared: DeclaredConfig): FunctionConfig {
  return { ...structuredClone(declared), accelerator: declared.accelerator ?? "auto", max_batch_size: declared.max_batch_size ?? 0, input: carriers(), output: carriers() };
}

/** The signature of a handler "model": the carrier tensors, with a batch dimension when the function batches. */
export function handlerSignature(config: Pick<FunctionConfig, "max_batch_size">): ModelSignature {
  const shape = config.max_batch_size > 0 ? [-1, 1] : [1];
  const tensors = [HANDLER_TENSORS.body, HANDLER_TENSORS.contentType].map((name) => ({ name, datatype: "BYTES" as const, shape: [...shape] }));
  return { inputs: tensors, outputs: tensors.map((t) => ({ ...t, shape: [...t.shape] })) };
}
