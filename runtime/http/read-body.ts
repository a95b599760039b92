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

/**
 * Refuses a body whose declared `Content-Length` is over `limit` (RESOURCE_EXHAUSTED → 413)
 * before anything else is decided about the request. A body of up to 16 MiB is read and dropped
 * first: a server that answers while the client is still sending makes some clients see a broken
 * pipe instead of the 413. Larger ones go unread.
 */
export async function refuseDeclaredOversize(request: Request, limit: number, direct?: DirectBody): Promise<void> {
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (!(declared > limit)) return;
  if (declared <= DRAIN_LIMIT) {
    if (direct) await direct.read(DRAIN_LIMIT).catch(() => {});
    else if (request.body) await drain(request.body).catch(() => {});
  }
  throw tooLarge(limit);
}

/**
 * Reads a request body, inflating `Content-Encoding: gzip|deflate` as Triton does, and refuses
 * anything larger than `limit` bytes (before or after inflation) with RESOURCE_EXHAUSTED (413).
 * A client that goes away mid-body gets a `ClientAbortedError`.
 */
export async function readBody(request: Request, limit: number, direct?: DirectBody): Promise<Uint8Array> {
  await refuseDeclaredOversize(request, limit, direct);
  const declared = Number(request.headers.get("content-length") ?? NaN);
  const encoding = request.headers.get("content-encoding")?.trim().toLowerCase();
  if (direct) return await readDirect(direct, { limit, declared, encoding });
  if (!request.body) return new Uint8Array();
  try {
    if (!encoding || encoding === "identity") {
      if (Number.isFinite(declared)) return new Uint8Array(await request.arrayBuffer());
      return await collect(request.body, limit, "request body");
    }
    if (encoding !== "gzip" && encoding !== "deflate") {
      throw invalidArg(`unsupported Content-Encoding '${encoding}'; use gzip, deflate or none`);
    }
    return await collect(request.body.pipeThrough(new DecompressionStream(encoding)), limit, "inflated request body");
  } catch (error) {
    if (error instanceof RuntimeError) throw error;
    // The runtimes differ in what they throw (Node: "aborted", Deno/Bun: their own); the signal agrees.
    if (request.signal.aborted || !encoding || encoding === "identity") {
      throw new ClientAbortedError(declared);
    }
    throw invalidArg(`request body is not valid ${encoding} data: ${(error as Error).message}`);
  }
}

const DRAIN_LIMIT = 16 * 1024 * 1024;

/** `readBody` over an adapter's `DirectBody`: the same limits, inflation and errors as the stream path. */
async function readDirect(
  direct: DirectBody,
  { limit, declared, encoding }: { limit: number; declared: number; encoding: string | undefined },
): Promise<Uint8Array> {
  if (encoding && encoding !== "identity" && encoding !== "gzip" && encoding !== "deflate") {
    throw invalidArg(`unsupported Content-Encoding '${encoding}'; use gzip, deflate or none`);
  }
  let raw: Uint8Array | undefined;
  try {
    raw = await direct.read(limit);
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
    if (direct.signal.aborted) throw new ClientAbortedError(declared);
    throw invalidArg(`request body is not valid ${encoding} data: ${(error as Error).message}`);
  }
}

async function drain(stream: ReadableStream<Uint8Array>): Promise<void> {
  const reader = stream.getReader();
  while (!(await reader.read()).done);
}

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
