import type { Deployment, ModelManager } from "../lifecycle/mod.ts";
import { Admission, CallOptions } from "./call-options.ts";
import type { ClientConnections } from "./client-connections.ts";
import type { DirectBody } from "./direct-body.ts";
import { refuseDeclaredOversize, takeBody } from "./read-body.ts";
import type { SharedMemoryRegions } from "./shared-memory-regions.ts";
import type { HeaderLookup } from "./read-body.ts";

/** What every call needs from the server, whichever protocol carries it. */
export interface CallContext {
  models: ModelManager;
  /** Largest accepted request body, compressed or inflated (`--max-input-size`). */
  maxInputBytes: number;
  /** Weighted elements one request may carry (`--max-elements`; see `checkElementBudget`). */
  maxElements?: number;
  /** The server's client connections, told which requests are settled (the batchers read it). */
  clients?: ClientConnections;
  /** Registered system shared-memory regions (Triton's extension), where the platform has them. */
  sharedMemory?: SharedMemoryRegions;
}

/** One call as a protocol hands it over: the function it names, its headers and its unread body. */
export interface Call {
  name: string;
  version: string | undefined;
  header: HeaderLookup;
  body: DirectBody;
}

/** A call let in: its deployment, its whole body and the options its scheduling carries. */
export interface Admitted {
  deployment: Deployment;
  bytes: Uint8Array;
  options: CallOptions;
}

/**
 * Admission, the one definition every protocol's call runs. Cheapest refusals first, all before
 * the body is read: its declared size (413), the function and version (404, loading it on demand),
 * the rate limit (429), room in the queue (503); then the body, bounded by `--max-input-size`.
 * `beforeBody` runs once the deployment is known, for a refusal of the call's own that needs it
 * (a body route to a function without a handler).
 */
export async function admit(ctx: CallContext, call: Call, beforeBody?: (d: Deployment) => void | Promise<void>): Promise<Admitted> {
  const { name, version, header, body } = call;
  const refused = refuseDeclaredOversize(header, body, ctx.maxInputBytes);
  if (refused) await refused;
  // One lookup for admission (rate_limit, 429, before any load) and the deployment, which
  // inference then uses (a retry on a reload's successor looks up again, without admission).
  // A READY deployment comes back at once, without a turn of the event loop.
  const found = ctx.models.acquireNow(name, version, new Admission(header, body));
  const deployment = found instanceof Promise ? await found : found;
  if (beforeBody) await beforeBody(deployment);
  deployment.checkRoom();
  const bytes = await takeBody(header, body, ctx.maxInputBytes);
  return { deployment, bytes, options: new CallOptions(body, deployment) };
}
