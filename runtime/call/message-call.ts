import type { InferRequest, InferResponse } from "../core/mod.ts";
import { admitTo, sequenceLease } from "./admission.ts";
import type { CallContext } from "./admission.ts";
import { CallOptions } from "./call-options.ts";
import { writeSharedOutputs } from "./shared-outputs.ts";
import type { ReadRequest, SharedMemoryReader } from "../tensor/mod.ts";
import type { OwnedRegions } from "./shared-memory-regions.ts";
import type { SignalSource } from "./call-options.ts";
import { decodeFor } from "./infer-call.ts";
import type { HeaderLookup } from "./direct-body.ts";

/**
 * An inference call whose request arrived already framed by its protocol (a gRPC message, read
 * whole and bounded by the protocol's message size): what it names, its metadata, its client
 * signal, and how to decode it once the deployment is known.
 */
export interface MessageCall {
  name: string;
  version: string | undefined;
  header: HeaderLookup;
  /** Carries the client's signal, read only where the call waits (a gRPC call's builds it on first read). */
  client: SignalSource;
  /** The request read as far as what it declares, by its protocol's codec; its data decoded later. */
  read(sharedMemory: SharedMemoryReader | undefined): ReadRequest;
}

/**
 * KServe v2 inference for a protocol that frames its own messages: the admission every call runs
 * (the function and version, loading on demand; the rate limit; room in the queue) before the
 * request's tensors are decoded, then the schedule. Answers the response and the request it
 * answers (its requested outputs), for the protocol to encode.
 */
export async function inferMessage(ctx: CallContext, call: MessageCall): Promise<{ request: InferRequest; response: InferResponse }> {
  // The caller's own regions (another key's read as ones that do not exist), before the room check:
  // from there to the queue nothing yields.
  let regions: OwnedRegions | undefined;
  const shared = ctx.sharedMemory;
  const found = admitTo(ctx, call.name, call.version, call.header, call.client, () => {
    if (!shared?.registered) return void (regions = shared?.as(""));
    return shared.ownerOf(call.header).then((owner) => void (regions = shared.as(owner)));
  });
  let lease = found instanceof Promise ? await found : found;
  const reading = call.read(regions);
  if (lease.routed) {
    const leased = sequenceLease(ctx, call.name, lease, reading.header.parameters);
    const before = lease.deployment;
    lease = leased instanceof Promise ? await leased : leased;
    if (lease.deployment !== before) lease.deployment.checkRoom();
  }
  const request = decodeFor(ctx, lease.deployment, reading);
  const response = await lease.infer(request, new CallOptions(call.client));
  writeSharedOutputs(response, request, regions);
  return { request, response };
}
