import type { ModelSignature } from "../core/mod.ts";
import { fromConfigType } from "../tensor/mod.ts";
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
 * Whether a handler function computes on tensors it declares (`compute(inputs)`, like a model)
 * rather than on request bodies (`execute(requests)`, through the carrier tensors).
 */
export function computesTensors(config: Pick<DeclaredConfig, "backend" | "input">): boolean {
  // Declared (before completion) a body handler lists no inputs; completed, it lists the carriers.
  const carriers = config.input.length === 2 && config.input.every((t) => (t.name === HANDLER_TENSORS.body || t.name === HANDLER_TENSORS.contentType) && t.data_type === "TYPE_STRING");
  return config.backend === "handler" && config.input.length > 0 && !carriers;
}

/**
 * Completes a `backend: handler` config: there is no model; the inputs and outputs are the ones it
 * declares (a tensor handler) or else the two carrier tensors, and an omitted `max_batch_size` is 0
 * (each request alone; set it, with `dynamic_batching`, to hand the handler several at once).
 */
export function completeHandlerConfig(declared: DeclaredConfig): FunctionConfig {
  const tensors = computesTensors(declared) ? {} : { input: carriers(), output: carriers() };
  return { ...structuredClone(declared), accelerator: declared.accelerator ?? "auto", max_batch_size: declared.max_batch_size ?? 0, ...tensors };
}

/** The signature of a handler "model": its declared tensors or the carriers, with a batch dimension when the function batches. */
export function handlerSignature(config: Pick<DeclaredConfig, "backend" | "input" | "output" | "max_batch_size">): ModelSignature {
  const batching = (config.max_batch_size ?? 0) > 0;
  if (computesTensors(config)) {
    const signature = (t: TensorConfig) => ({ name: t.name, datatype: fromConfigType(t.data_type), shape: batching ? [-1, ...(t.reshape?.shape ?? t.dims)] : [...(t.reshape?.shape ?? t.dims)] });
    return { inputs: config.input.map(signature), outputs: config.output.map(signature) };
  }
  const shape = batching ? [-1, 1] : [1];
  const tensors = [HANDLER_TENSORS.body, HANDLER_TENSORS.contentType].map((name) => ({ name, datatype: "BYTES" as const, shape: [...shape] }));
  return { inputs: tensors, outputs: tensors.map((t) => ({ ...t, shape: [...t.shape] })) };
}
