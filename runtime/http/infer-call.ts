import { elementCount, invalidArg } from "../core/mod.ts";
import type { InferRequest } from "../core/mod.ts";
import type { FunctionConfig } from "../config/mod.ts";
import {
  byteSize,
  checkElementBudget,
  DEFAULT_MAX_ELEMENTS,
  decodeInferRequest,
  decodeRawBinaryRequest,
  encodeInferResponse,
  fromConfigType,
} from "../tensor/mod.ts";
import type { RequestHeader } from "../tensor/mod.ts";
import type { Deployment, ModelManager } from "../lifecycle/mod.ts";
import { Admission, CallOptions } from "./call-options.ts";
import type { ClientConnections } from "./client-connections.ts";
import type { DirectBody } from "./direct-body.ts";
import type { Reply } from "./error-status.ts";
import { refuseDeclaredOversize, takeBody } from "./read-body.ts";
import type { HeaderLookup } from "./read-body.ts";

/** What an inference call needs from the server. */
export interface InferContext {
  models: ModelManager;
  /** Largest accepted request body, compressed or inflated (`--max-input-size`). */
  maxInputBytes: number;
  /** Weighted elements one request may carry (`--max-elements`; see `checkElementBudget`). */
  maxElements?: number;
  /** The server's client connections, told which requests are settled (the batchers read it). */
  clients?: ClientConnections;
}

/** One `POST /v2/models/{name}[/versions/{version}]/infer`, whoever carries it. */
export interface InferCall {
  name: string;
  version: string | undefined;
  header: HeaderLookup;
  body: DirectBody;
}

/**
 * KServe v2 inference, the one definition both the Hono route and an adapter's fast lane run.
 * Cheapest refusals first, all before the body is read: its declared size, the function and
 * version (404), the rate limit (429), room in the queue (503). Then read, check the header
 * against the model and the element budget, and only then decode tensor data.
 */
export async function inferCall(ctx: InferContext, call: InferCall): Promise<Reply> {
  const { name, version, header, body } = call;
  const refused = refuseDeclaredOversize(header, body, ctx.maxInputBytes);
  if (refused) await refused;
  const options = new CallOptions(body);
  // One lookup for admission (rate_limit, 429, before any load) and the deployment, which
  // inference then uses (a retry on a reload's successor looks up again, without admission).
  // A READY deployment comes back at once, without a turn of the event loop.
  const found = ctx.models.acquireNow(name, version, new Admission(header, body));
  const d = (options.acquired = found instanceof Promise ? await found : found);
  d.checkRoom();
  const bytes = await takeBody(header, body, ctx.maxInputBytes);
  const framing = header("inference-header-content-length");
  // With response_cache: a request of exactly these bytes answered before gets that reply as it was sent.
  const remembered = d.cachedReply(framing ?? "", bytes);
  if (remembered.reply) return { status: 200, headers: remembered.reply.headers, body: remembered.reply.body };
  const request = decode(bytes, framing, d, elementLimit(ctx, d));
  // A raw binary request is shaped from the config, not checked while decoding: the deployment checks it.
  if (framing === undefined || Number(framing) > 0) options.checked = d;
  // Settled: read whole and bound for a function that sends no requests of its own (client-connections.ts).
  const connection = body.connection;
  const clients = connection && !sendsRequests(d.config) ? ctx.clients : undefined;
  clients?.settled(connection!);
  let response;
  try {
    response = await ctx.models.infer(name, version, request, options);
  } finally {
    clients?.answered(connection!);
  }
  const encoded = encodeInferResponse(response, request);
  const headers: Record<string, string> =
    encoded.headerLength === undefined ? { "content-type": "application/json" } : { "content-type": "application/octet-stream", "inference-header-content-length": String(encoded.headerLength) };
  if (remembered.key) d.keepReply(remembered.key, { headers, body: encoded.body });
  return { status: 200, headers, body: encoded.body };
}

/** Whether a function's requests can send requests of their own from inside the server (ctx.infer, an ensemble's steps). */
function sendsRequests(config: FunctionConfig): boolean {
  return config.ensemble_scheduling !== undefined || config.backend === "handler";
}

/** The element budget of one request to `d`: the server's, or the function's `max_input_elements` when lower. */
function elementLimit(ctx: InferContext, d: Deployment): { maxElements: number; limitName: string } {
  const server = ctx.maxElements ?? DEFAULT_MAX_ELEMENTS;
  const own = d.config.max_input_elements;
  return own !== undefined && own < server ? { maxElements: own, limitName: `max_input_elements of '${d.name}'` } : { maxElements: server, limitName: "--max-elements" };
}

function decode(body: Uint8Array, header: string | undefined, d: Deployment, limit: { maxElements: number; limitName: string }): InferRequest {
  const check = (h: RequestHeader) => d.checkRequest(h);
  if (header === undefined) return decodeInferRequest(body, { check, ...limit });
  if (!/^[0-9]+$/.test(header.trim())) throw invalidArg(`Inference-Header-Content-Length '${header}' is not a byte count`);
  const headerLength = Number(header);
  if (headerLength > 0) return decodeInferRequest(body, { headerLength, check, ...limit });
  const input = rawInput(d.config, body.byteLength);
  checkElementBudget([{ name: input.name, datatype: input.datatype, elements: elementCount(input.shape) }], limit.maxElements, limit.limitName);
  return decodeRawBinaryRequest(body, input);
}

/**
 * The single input a raw binary request (header length 0) fills: batch 1, and the one variable
 * dimension, if any, resolved from the body size.
 */
function rawInput(config: FunctionConfig, bytes: number) {
  if (config.input.length !== 1) {
    throw invalidArg(`raw binary requests (Inference-Header-Content-Length: 0) need a model with exactly one input; '${config.name}' has ${config.input.length}`);
  }
  const input = config.input[0]!;
  const datatype = fromConfigType(input.data_type);
  const dims = config.max_batch_size > 0 ? [1, ...input.dims] : [...input.dims];
  if (datatype === "BYTES") {
    if (dims.some((d) => d !== 1 && d !== -1)) throw invalidArg(`raw binary BYTES input '${input.name}' must have shape [1]`);
    return { name: input.name, datatype, shape: dims.map(() => 1) };
  }
  const variable = dims.filter((d) => d === -1).length;
  if (variable > 1) throw invalidArg(`raw binary input '${input.name}' has more than one variable dimension`);
  const known = dims.reduce((n, d) => (d === -1 ? n : n * d), 1);
  const elements = bytes / byteSize(datatype);
  return { name: input.name, datatype, shape: dims.map((d) => (d === -1 ? elements / known : d)) };
}
