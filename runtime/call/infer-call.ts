import { invalidArg } from "../core/mod.ts";
import type { InferRequest } from "../core/mod.ts";
import type { FunctionConfig } from "../config/mod.ts";
import { DEFAULT_MAX_ELEMENTS, encodeInferResponse, fromConfigType, readInferRequest, readRawBinaryRequest } from "../tensor/mod.ts";
import type { RawInputSignature, ReadRequest, SharedMemoryReader } from "../tensor/mod.ts";
import type { Deployment } from "../lifecycle/mod.ts";
import { admit, sequenceLease } from "./admission.ts";
import { mentionsSharedMemory, writeSharedOutputs } from "./shared-outputs.ts";
import type { Call, CallContext } from "./admission.ts";
import type { Reply } from "./reply.ts";

/**
 * KServe v2 inference (`POST /v2/models/{name}[/versions/{version}]/infer`), whoever carries it:
 * admission (admission.ts), then the header checked against the model and the element budget,
 * and only then tensor data decoded, scheduled and encoded.
 */
export async function inferCall(ctx: CallContext, call: Call): Promise<Reply> {
  const { body, header } = call;
  const admitted = await admit(ctx, call);
  const { bytes, options } = admitted;
  let { lease, deployment: d } = admitted;
  const framing = header("inference-header-content-length");
  // With response_cache: a request of exactly these bytes answered before gets that reply as it was sent
  // (not one whose tensors live in shared memory: the same bytes may name other data, and outputs must be written).
  const shared = ctx.sharedMemory?.registered ? mentionsSharedMemory(bytes) : false;
  const remembered = shared ? {} : d.cachedReply(framing ?? "", bytes);
  if (remembered.reply) return { status: 200, headers: remembered.reply.headers, body: remembered.reply.body };
  // The caller's own regions: another key's read as ones that do not exist.
  const regions = ctx.sharedMemory?.as(shared ? await ctx.sharedMemory.ownerOf(header) : "");
  // Room again, now that the body is in: from here to the queue nothing yields, so this check is
  // exact, and a request that would be refused there is refused before its decode. Admission's
  // check came before the body; while it arrived (over several turns: a large body, and nearly
  // every body under Deno's node:http) others may have filled the queue. Measured under Deno at 3×
  // mlp's capacity: every refusal came from the queue, each after a 0.5 ms decode.
  d.checkRoom();
  const reading = read(bytes, framing, d.config, regions);
  if (lease.routed) {
    // A sequence under a rollout follows its id, which only the header says.
    const leased = sequenceLease(ctx, call.name, lease, reading.header.parameters);
    lease = leased instanceof Promise ? await leased : leased;
    if (lease.deployment !== d) (d = lease.deployment).checkRoom();
  }
  const request = decodeFor(ctx, d, reading);
  // Settled: read whole and bound for a function that sends no requests of its own (client-connections.ts).
  const connection = body.connection;
  const clients = connection && !sendsRequests(d.config) ? ctx.clients : undefined;
  clients?.settled(connection!);
  let response;
  try {
    response = await lease.infer(request, options);
  } finally {
    clients?.answered(connection!);
  }
  writeSharedOutputs(response, request, regions);
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
export function elementLimit(ctx: CallContext, d: Deployment): { maxElements: number; limitName: string } {
  const server = ctx.maxElements ?? DEFAULT_MAX_ELEMENTS;
  const own = d.config.max_input_elements;
  return own !== undefined && own < server ? { maxElements: own, limitName: `max_input_elements of '${d.name}'` } : { maxElements: server, limitName: "--max-elements" };
}

/**
 * A request's data decoded for `d`, whoever framed it: what it declares checked against `d`'s
 * config first, then its element counts against the budget, and only then its tensor data.
 */
export function decodeFor(ctx: CallContext, d: Deployment, read: ReadRequest): InferRequest {
  d.checkRequest(read.header);
  return read.decode(elementLimit(ctx, d));
}

/** A body read by the framing its `Inference-Header-Content-Length` names (none: JSON; 0: raw binary). */
function read(body: Uint8Array, header: string | undefined, config: FunctionConfig, sharedMemory: SharedMemoryReader | undefined): ReadRequest {
  if (header === undefined) return readInferRequest(body, { sharedMemory });
  if (!/^[0-9]+$/.test(header.trim())) throw invalidArg(`Inference-Header-Content-Length '${header}' is not a byte count`);
  const headerLength = Number(header);
  if (headerLength > 0) return readInferRequest(body, { headerLength, sharedMemory });
  return readRawBinaryRequest(body, rawInput(config));
}

/** The single input a raw binary request (header length 0) fills, batch 1, as its config declares it. */
function rawInput(config: FunctionConfig): RawInputSignature {
  if (config.input.length !== 1) {
    throw invalidArg(`raw binary requests (Inference-Header-Content-Length: 0) need a model with exactly one input; '${config.name}' has ${config.input.length}`);
  }
  const input = config.input[0]!;
  return { name: input.name, datatype: fromConfigType(input.data_type), shape: config.max_batch_size > 0 ? [1, ...input.dims] : [...input.dims] };
}
