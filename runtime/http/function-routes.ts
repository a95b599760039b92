import type { Hono } from "hono";
import { RuntimeError } from "../core/mod.ts";
import type { InferRequest, Tensor } from "../core/mod.ts";
import { computesTensors, HANDLER_TENSORS } from "../config/mod.ts";
import type { Deployment } from "../lifecycle/mod.ts";
import { checkHandlerInputs, encodeAnswer, functionRequest, outputsAnswer } from "../pipeline/mod.ts";
import { Admission, CallOptions } from "./call-options.ts";
import type { DirectBody, ServeEnv } from "./direct-body.ts";
import { toResponse } from "./error-status.ts";
import type { Reply } from "./error-status.ts";
import type { InferContext } from "./infer-call.ts";
import { refuseDeclaredOversize, requestBody, takeBody } from "./read-body.ts";
import type { HeaderLookup } from "./read-body.ts";

const utf8 = new TextEncoder();
const text = new TextDecoder();

/**
 * Function-style calls (ours): `GET /v1/functions` lists every function with its kind and state;
 * `POST /v1/functions/{name}` hands the body as it is (JSON, an image…) to a handler function
 * and answers with what the handler returned. Tensor callers keep the KServe route.
 */
export function registerFunctionRoutes(app: Hono, ctx: InferContext): void {
  app.get("/v1/functions", (c) => c.json({ functions: ctx.models.functions() }));
  app.post("/v1/functions/:name", async (c) => {
    const body = (c.env as ServeEnv | undefined)?.directBody ?? requestBody(c.req.raw);
    return toResponse(await functionCall(ctx, { name: c.req.param("name"), header: (h) => c.req.header(h), body }));
  });
}

/**
 * One function-style call. The same order as inference: declared size, function (404), rate
 * limit (429), queue room (503) before the body is read; then the body travels to the handler as
 * the BYTES tensors `body` and `content_type`, through the function's queue and batcher.
 */
export async function functionCall(ctx: InferContext, call: { name: string; header: HeaderLookup; body: DirectBody }): Promise<Reply> {
  const { name, header, body } = call;
  const refused = refuseDeclaredOversize(header, body, ctx.maxInputBytes);
  if (refused) await refused;
  const d = await ctx.models.acquire(name, undefined, new Admission(header, body));
  const handler = d.handler;
  const tensors = computesTensors(d.config);
  const viaExecute = d.config.backend === "handler" && !tensors;
  if (!viaExecute && (!handler || (tensors && !(await handler.exports("preprocess"))))) {
    const what = tensors ? "its handler computes on tensors and has no preprocess" : `it serves a model, backend ${d.config.backend}`;
    throw new RuntimeError("INVALID_ARG", `function '${name}' has no handler to take a body (${what}); send tensors to POST /v2/models/${name}/infer`);
  }
  d.checkRoom();
  const bytes = await takeBody(header, body, ctx.maxInputBytes);
  const contentType = header("content-type") ?? "";
  const options = new CallOptions(body, d);
  if (viaExecute) {
    // backend: handler — execute() answers, through the function's queue and batcher.
    const response = await ctx.models.infer(name, String(d.version), handlerRequest(d, bytes, contentType), options);
    const out = (n: string) => (response.outputs.find((o) => o.name === n)!.tensor.data as Uint8Array[])[0]!;
    return { status: 200, headers: { "content-type": headerSafe(text.decode(out(HANDLER_TENSORS.contentType))) }, body: out(HANDLER_TENSORS.body) };
  }
  // A model with a handler (checked above): preprocess → the model (batched with every other request) → postprocess.
  const request = functionRequest(bytes, contentType, body.signal);
  const inputs = checkHandlerInputs(name, await handler!.preprocess(request));
  const inferRequest: InferRequest = { parameters: {}, inputs: Object.entries(inputs).map(([input, tensor]) => ({ name: input, tensor })) };
  const response = await ctx.models.infer(name, String(d.version), inferRequest, options);
  const outputs = Object.fromEntries(response.outputs.map((o) => [o.name, o.tensor]));
  const post = await handler!.postprocess(outputs, request);
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
