import type { ClientConnection } from "./client-connections.ts";

/**
 * A request body the adapter reads from its socket itself (Node's listener), or a web `Request`'s
 * (`requestBody`, for Bun's and Deno's servers). Reading the IncomingMessage straight skips the
 * web-stream bridge a `Request` would need, which cost ≈100 µs of latency and CPU for a 200-byte
 * body (bench/results/body-json.md). Read once per request, by the route that takes a body.
 */
export interface DirectBody {
  /** The client connection it arrived on, where the adapter reports connections (client-connections.ts). */
  readonly connection?: ClientConnection;
  /** Aborted when the client goes away before its response finished (replaces `request.signal`). */
  readonly signal: AbortSignal;
  /**
   * The whole body as sent (still Content-Encoded), in a buffer of its own (never a pooled slice).
   * Resolves `undefined` as soon as more than `limit` bytes arrived, and stops reading; rejects when
   * the client aborts mid-body.
   */
  read(limit: number): Promise<Uint8Array | undefined>;
  /**
   * The whole body at once, when all of it has arrived already (buffered) and is within `limit`,
   * as `read` would give it; else undefined, and `read` waits for it. Optional: an adapter that
   * cannot tell leaves it out.
   */
  take?(limit: number): Uint8Array | undefined;
}

/** A request header by lower-case name, whoever carries the request (a `Request`, Node's `IncomingMessage`). */
export type HeaderLookup = (name: string) => string | undefined;
