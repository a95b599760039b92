import type { Tensor } from "../core/mod.ts";
import { HANDLER_TENSORS } from "../config/mod.ts";
import type { Backend, LoadOptions, Session } from "../backends/backend.ts";
import { checkComputedOutputs, encodeAnswer, functionRequest } from "./function-io.ts";
import type { HandlerHost } from "./handler-host.ts";
import { plainTensors } from "../tensor/mod.ts";

const utf8 = new TextEncoder();
const text = new TextDecoder();

/**
 * The backend of a `backend: handler` function: its "sessions" hand each batch of requests to
 * the handler's `execute`. A request travels as two BYTES tensors (`body`, `content_type`), so the
 * queue, batcher, statistics and limits are the ones every function has; a handler that declares
 * tensors (`tensors`) is called with them, its `compute` standing for the model. Every instance of one
 * deployment shares its HandlerHost (one module, initialized once); the last one released closes it.
 */
export function createHandlerBackend(host: HandlerHost, mode: { tensors?: boolean; batching?: boolean; name?: string } = {}): Backend {
  let open = 0;
  return {
    name: "handler",
    load(_model: Uint8Array, options: LoadOptions): Promise<Session> {
      const signature = options.signature;
      if (!signature) throw new Error("the handler backend needs the signature from the config");
      open++;
      let released = false;
      return Promise.resolve({
        signature,
        provider: "cpu",
        executionThread: "main",
        run: async (feeds: Record<string, Tensor>, runOptions) => {
          const signals = runOptions?.requestSignals;
          if (mode.tensors) {
            // A tensor handler: compute() is the model. Rows to expect, when the function batches: the batch's.
            const rows = mode.batching ? Object.values(feeds)[0]?.shape[0] : undefined;
            return checkComputedOutputs(mode.name ?? "handler", await host.compute(plainTensors(feeds), signals), signature.outputs, rows);
          }
          const body = feeds[HANDLER_TENSORS.body]!;
          const types = feeds[HANDLER_TENSORS.contentType]!;
          const bodies = body.data as Uint8Array[];
          // One row per request (the carriers' shape), so row i's signal is request i's.
          const requests = bodies.map((b, i) => functionRequest(b, text.decode((types.data as Uint8Array[])[i] ?? new Uint8Array()), signals?.[i]));
          const answers = await host.execute(requests, signals);
          const encoded = answers.map(encodeAnswer);
          return {
            [HANDLER_TENSORS.body]: { datatype: "BYTES", shape: [...body.shape], data: encoded.map((a) => a.body) },
            [HANDLER_TENSORS.contentType]: { datatype: "BYTES", shape: [...body.shape], data: encoded.map((a) => utf8.encode(a.contentType)) },
          };
        },
        release: async () => {
          if (released) return;
          released = true;
          if (--open === 0) await host.close();
        },
      });
    },
  };
}
