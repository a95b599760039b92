import { RuntimeError } from "../core/mod.ts";
import type { ErrorCode } from "../core/mod.ts";
import { ClientAbortedError } from "./read-body.ts";

const statusByCode: Record<ErrorCode, number> = {
  INVALID_ARG: 400,
  ALREADY_EXISTS: 400,
  CANCELLED: 400,
  NOT_FOUND: 404,
  RESOURCE_EXHAUSTED: 413,
  RATE_LIMITED: 429,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  UNSUPPORTED: 501,
  UNAVAILABLE: 503,
  INTERNAL: 500,
};

/** The one place where an error becomes an HTTP status and a `{"error": ...}` body. */
export function errorResponse(error: unknown, log?: (message: string) => void): Response {
  if (error instanceof ClientAbortedError) {
    // Expected, and nobody is left to read an answer: one line, no stack.
    log?.(error.message);
    return jsonError(statusByCode[error.code], error.message);
  }
  if (error instanceof RuntimeError) {
    const response = jsonError(statusByCode[error.code], error.message);
    // A body refused unread leaves the connection in an unknown state: ask the client not to reuse it.
    if (error.code === "RESOURCE_EXHAUSTED") response.headers.set("connection", "close");
    // RFC 6750: a 401 names the scheme the client should use.
    if (error.code === "UNAUTHENTICATED") response.headers.set("www-authenticate", 'Bearer realm="tensorfn"');
    // Retry-After counts whole seconds (RFC 9110); the message gives the exact wait.
    if (error.retryAfterMs !== undefined) response.headers.set("retry-after", String(Math.max(1, Math.ceil(error.retryAfterMs / 1000))));
    return response;
  }
  // Anything else is our bug, not the client's: say so, and keep the details in the log.
  log?.(`internal error: ${(error as Error)?.stack ?? error}`);
  return jsonError(500, `internal error: ${(error as Error)?.message ?? String(error)}`);
}

export function jsonError(status: number, message: string): Response {
  return Response.json({ error: message }, { status });
}
