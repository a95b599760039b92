import { invalidArg, RuntimeError } from "../core/mod.ts";
import type { DirectBody } from "./direct-body.ts";

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

/** A request header by lower-case name, whoever carries the request (a `Request`, an adapter's own lane). */
export type HeaderLookup = (name: string) => string | undefined;

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
