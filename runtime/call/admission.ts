import { invalidArg, RuntimeError } from "../core/mod.ts";
import type { Deployment, Lease, ModelManager } from "../lifecycle/mod.ts";
import { Admission, CallOptions } from "./call-options.ts";
import type { SignalSource } from "./call-options.ts";
import type { ClientConnections } from "./client-connections.ts";
import type { DirectBody, HeaderLookup } from "./direct-body.ts";
import type { SharedMemoryRegions } from "./shared-memory-regions.ts";

// Admission and the body it lets in: the refusals every call decides before its own work, cheapest
// first, then the body read within `--max-input-size` (inflated where it is Content-Encoded).

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

/**
 * The client closed the connection before its body arrived: nobody is left to answer, so it is
 * logged as one line (`errorResponse`), never as an internal error.
 */
export class ClientAbortedError extends RuntimeError {
  constructor(declared: number) {
    super("CANCELLED", `client aborted the request body${Number.isFinite(declared) ? ` (Content-Length ${declared})` : ""}`);
    this.name = "ClientAbortedError";
  }
}

/**
 * Refuses a body whose declared `Content-Length` is over `limit` (RESOURCE_EXHAUSTED → 413)
 * before anything else is decided about the request: the refusal, which rejects once a body of
 * up to 16 MiB was read and dropped (a server that answers while the client is still sending
 * makes some clients see a broken pipe instead of the 413; larger ones go unread). Undefined when
 * the length is within the limit: the common case costs no promise.
 */
export function refuseDeclaredOversize(header: HeaderLookup, body: DirectBody, limit: number): Promise<never> | undefined {
  const declared = Number(header("content-length") ?? NaN);
  if (!(declared > limit)) return undefined;
  return (async () => {
    if (declared <= DRAIN_LIMIT) await body.read(DRAIN_LIMIT).catch(() => {});
    throw tooLarge(limit);
  })();
}

/**
 * Reads a request body, inflating `Content-Encoding: gzip|deflate` as Triton does, and refuses
 * anything larger than `limit` bytes (before or after inflation) with RESOURCE_EXHAUSTED (413).
 * A client that goes away mid-body gets a `ClientAbortedError`.
 */
export async function readBody(header: HeaderLookup, body: DirectBody, limit: number): Promise<Uint8Array> {
  const refused = refuseDeclaredOversize(header, body, limit);
  if (refused) await refused;
  const declared = Number(header("content-length") ?? NaN);
  const encoding = header("content-encoding")?.trim().toLowerCase();
  if (encoding && encoding !== "identity" && encoding !== "gzip" && encoding !== "deflate") {
    throw invalidArg(`unsupported Content-Encoding '${encoding}'; use gzip, deflate or none`);
  }
  let raw: Uint8Array | undefined;
  try {
    raw = await body.read(limit);
  } catch {
    throw new ClientAbortedError(declared);
  }
  if (raw === undefined) throw tooLarge(limit);
  if (encoding !== "gzip" && encoding !== "deflate") return raw;
  // Compressed bodies are rare: inflate through the web stream, bounded as it goes.
  try {
    const inflated = new Blob([raw as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream(encoding));
    return await collect(inflated, limit, "inflated request body");
  } catch (error) {
    if (error instanceof RuntimeError) throw error;
    if (body.signal.aborted) throw new ClientAbortedError(declared);
    throw invalidArg(`request body is not valid ${encoding} data: ${(error as Error).message}`);
  }
}

/**
 * `readBody`, taking a body that has all arrived at once where the adapter can (`DirectBody.take`):
 * the usual small request skips the read's promise, listeners and events. On Node a body sent
 * with its head is pushed one microtask after the head's callback, which is where a route runs
 * that awaited nothing yet: one `await` lets it arrive.
 */
export async function takeBody(header: HeaderLookup, body: DirectBody, limit: number): Promise<Uint8Array> {
  if (body.take && header("content-encoding") === undefined) {
    const now = body.take(limit);
    if (now) return now;
    await null;
    const next = body.take(limit);
    if (next) return next;
  }
  return readBody(header, body, limit);
}

/**
 * A web `Request`'s body as a `DirectBody` (Bun, Deno, tests, and Node routes the adapter gives no
 * body of its own): the native `arrayBuffer()` when the length is declared and allowed, else read
 * as a stream and stopped as soon as it passes the limit.
 */
export function requestBody(request: Request): DirectBody {
  return new RequestBody(request);
}

/** A class, not a literal with `get signal()`, for the reason call-options.ts gives. */
class RequestBody implements DirectBody {
  readonly #request: Request;

  constructor(request: Request) {
    this.#request = request;
  }

  get signal(): AbortSignal {
    return this.#request.signal;
  }

  async read(limit: number): Promise<Uint8Array | undefined> {
    const request = this.#request;
    if (!request.body) return new Uint8Array();
    const declared = Number(request.headers.get("content-length") ?? NaN);
    if (Number.isFinite(declared) && declared <= limit) return new Uint8Array(await request.arrayBuffer());
    const reader = request.body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return concat(chunks, size);
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => {});
        return undefined;
      }
      chunks.push(value);
    }
  }
}

const DRAIN_LIMIT = 16 * 1024 * 1024;

async function collect(stream: ReadableStream<Uint8Array>, limit: number, what: string): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(limit, what);
    }
    chunks.push(value);
  }
  return concat(chunks, size);
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const body = new Uint8Array(size);
  let offset = 0;
  for (const c of chunks) {
    body.set(c, offset);
    offset += c.byteLength;
  }
  return body;
}

function tooLarge(limit: number, what = "request body"): RuntimeError {
  return new RuntimeError("RESOURCE_EXHAUSTED", `${what} exceeds the limit of ${limit} bytes (--max-input-size)`);
}
