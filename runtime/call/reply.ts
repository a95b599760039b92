/** A response as plain data: what a call answers, before a protocol's server writes it. */
export interface Reply {
  status: number;
  /** May be shared (a cached reply's): never changed once the reply is made. */
  headers: Record<string, string>;
  body: string | Uint8Array;
}

/** A JSON reply; errors are `{"error": message}`. */
export function jsonReply(status: number, value: unknown): Reply {
  return { status, headers: { "content-type": "application/json" }, body: JSON.stringify(value) };
}
