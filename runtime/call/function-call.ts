import { RuntimeError } from "../core/mod.ts";
import type { InferRequest, Tensor } from "../core/mod.ts";
import { computesTensors, HANDLER_TENSORS } from "../config/mod.ts";
import type { Deployment } from "../lifecycle/mod.ts";
import { checkHandlerInputs, encodeAnswer, functionRequest, outputsAnswer } from "../pipeline/mod.ts";
import { admit } from "./admission.ts";
import type { Call, CallContext } from "./admission.ts";
import type { Reply } from "./reply.ts";

const utf8 = new TextEncoder();
const text = new TextDecoder();

/**
 * One function-style call (`POST /v1/functions/{name}`): admission as for inference, then the body
 * travels as it is (JSON, an image…) to the function's handler, and the answer is what the handler
 * returned. A handler function (`backend: handler`) answers from `execute`, through the function's
 * queue and batcher; a model with a handler runs preprocess → the model (batched with every other
 * request) → postprocess.
 */
export async function functionCall(ctx: CallContext, call: Omit<Call, "version">): Promise<Reply> {
  let viaExecute = false;
  const { lease, deployment: d, bytes, options } = await admit(ctx, { ...call, version: undefined }, async (d) => {
    const tensors = computesTensors(d.config);
    viaExecute = d.config.backend === "handler" && !tensors;
    if (!viaExecute && (!d.handler || (tensors && !(await d.handler.exports("preprocess"))))) {
      const what = tensors ? "its handler computes on tensors and has no preprocess" : `it serves a model, backend ${d.config.backend}`;
      throw new RuntimeError("INVALID_ARG", `function '${d.name}' has no handler to take a body (${what}); send tensors to POST /v2/models/${d.name}/infer`);
    }
  });
  const contentType = call.header("content-type") ?? "";
  if (viaExecute) {
    const response = await lease.infer(handlerRequest(d, bytes, contentType), options);
    const out = (n: string) => (response.outputs.find((o) => o.name === n)!.tensor.data as Uint8Array[])[0]!;
    return { status: 200, headers: { "content-type": headerSafe(text.decode(out(HANDLER_TENSORS.contentType))) }, body: out(HANDLER_TENSORS.body) };
  }
  const handler = d.handler!;
  const request = functionRequest(bytes, contentType, call.body.signal);
  const inputs = checkHandlerInputs(d.name, await handler.preprocess(request));
  const inferRequest: InferRequest = { parameters: {}, inputs: Object.entries(inputs).map(([input, tensor]) => ({ name: input, tensor })) };
  const response = await lease.infer(inferRequest, options);
  const outputs = Object.fromEntries(response.outputs.map((o) => [o.name, o.tensor]));
  const post = await handler.postprocess(outputs, request);
  const answer = post ? encodeAnswer(post.answer) : outputsAnswer(outputs);
  return { status: 200, headers: { "content-type": headerSafe(answer.contentType) }, body: answer.body };
}

/**
 * A handler's media type as a header value: one a header cannot carry (a handler that echoes what a
 * tensor caller put in `content_type`, CR/LF included) is sent as application/octet-stream instead.
 */
function headerSafe(type: string): string {
  return type.length > 0 && type.length <= 256 && /^[\x20-\x7e\t]+$/.test(type) ? type : "application/octet-stream";
}

function handlerRequest(d: Deployment, body: Uint8Array, contentType: string): InferRequest {
  const shape = d.config.max_batch_size > 0 ? [1, 1] : [1];
  const bytes = (data: Uint8Array): Tensor => ({ datatype: "BYTES", shape, data: [data] });
  return {
    parameters: {},
    inputs: [
      { name: HANDLER_TENSORS.body, tensor: bytes(body) },
      { name: HANDLER_TENSORS.contentType, tensor: bytes(utf8.encode(contentType)) },
    ],
  };
}
