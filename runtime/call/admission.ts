import type { Deployment, Lease, ModelManager } from "../lifecycle/mod.ts";
import { Admission, CallOptions } from "./call-options.ts";
import type { SignalSource } from "./call-options.ts";
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

/** A call let in: its lease (the deployment, found once, its inference runs on), its whole body and the options its scheduling carries. */
export interface Admitted {
  lease: Lease;
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
  const found = admitTo(ctx, name, version, header, body, beforeBody);
  const lease = found instanceof Promise ? await found : found;
  const bytes = await takeBody(header, body, ctx.maxInputBytes);
  return { lease, deployment: lease.deployment, bytes, options: new CallOptions(body) };
}

/**
 * The part of admission every call runs, whatever framed its body (HTTP's unread one, a gRPC
 * message, an OpenAI body that names its model): one lookup for the function's rate limit (429,
 * before any load) and the deployment, loading it on demand (404, 503), `before` (a refusal of
 * the call's own that needs the deployment), then room in the queue (503). The lease it answers
 * is what the inference runs on: no second lookup. A READY deployment's comes back at once, not
 * as a promise (awaiting one costs the hot path a turn).
 */
export function admitTo(ctx: CallContext, name: string, version: string | undefined, header: HeaderLookup, client: SignalSource, before?: (d: Deployment) => void | Promise<void>): Lease | Promise<Lease> {
  const found = ctx.models.leaseNow(name, version, new Admission(header, client));
  return found instanceof Promise ? found.then((lease) => withRoom(lease, before)) : withRoom(found, before);
}

/**
 * The lease a sequence's request runs on: under a rollout every request of one sequence follows
 * its id (`parameters.sequence_id`) to the version that holds its state, whatever the share or the
 * key header say; otherwise `lease` itself. Admission by `rate_limit` is not taken again.
 */
export function sequenceLease(ctx: CallContext, name: string, lease: Lease, parameters: Readonly<Record<string, unknown>>): Lease | Promise<Lease> {
  const id = parameters.sequence_id;
  if (!lease.routed || id === undefined || id === 0 || id === "") return lease;
  return ctx.models.leaseNow(name, undefined, { sequence: String(id) });
}

/** `before`, then the queue's room; a promise only where `before` answers one. */
function withRoom(lease: Lease, before?: (d: Deployment) => void | Promise<void>): Lease | Promise<Lease> {
  const pending = before?.(lease.deployment);
  if (pending instanceof Promise) return pending.then(() => (lease.deployment.checkRoom(), lease));
  lease.deployment.checkRoom();
  return lease;
}
