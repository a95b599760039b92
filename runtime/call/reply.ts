/** A response as plain data: what a call answers, before a protocol's server writes it. */
export interface Reply {
  status: number;
  /** May be shared (a cached reply's): never changed once the reply is made. */
  headers: Record<string, string>;
  /** Whole, or a stream sent as it is made (Server-Sent Events); a server that stops writing it cancels it. */
  body: string | Uint8Array | ReadableStream<Uint8Array>;
}

/** Whether a reply's body is a stream (written as it comes, never compressed or measured whole). */
export function streamed(body: Reply["body"]): body is ReadableStream<Uint8Array> {
  return typeof body !== "string" && !(body instanceof Uint8Array);
}

/** A JSON reply; errors are `{"error": message}`. */
export function jsonReply(status: number, value: unknown): Reply {
  return { status, headers: { "content-type": "application/json" }, body: JSON.stringify(value) };
}
