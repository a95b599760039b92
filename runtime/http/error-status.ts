import { RuntimeError } from "../core/mod.ts";
import type { ErrorCode } from "../core/mod.ts";
import { ClientAbortedError, jsonReply, shownError } from "../call/mod.ts";
import type { ErrorLog, Reply } from "../call/mod.ts";

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
  DEADLINE_EXCEEDED: 504,
  INTERNAL: 500,
};


/**
 * The one place where an error becomes an HTTP status, headers and a `{"error": ...}` body.
 * `redact` takes absolute paths out of the message (the repository's, made relative); the message
 * is cut at MAX_ERROR_CHARS.
 */
export function errorReply(error: unknown, log?: ErrorLog, redact: (text: string) => string = (t) => t): Reply {
  const shown = (message: string) => shownError(message, redact);
  if (error instanceof ClientAbortedError) {
    // Expected, and nobody is left to read an answer: one line, no stack.
    (log?.clientAborted ?? log?.error)?.(error.message);
    return jsonReply(statusByCode[error.code], { error: shown(error.message) });
  }
  if (error instanceof RuntimeError) {
    const reply = jsonReply(error.status ?? statusByCode[error.code], { error: shown(error.message) });
    // A body refused unread leaves the connection in an unknown state: ask the client not to reuse it.
    if (error.code === "RESOURCE_EXHAUSTED") reply.headers.connection = "close";
    // RFC 6750: a 401 names the scheme the client should use.
    if (error.code === "UNAUTHENTICATED") reply.headers["www-authenticate"] = 'Bearer realm="tensorfn"';
    // Retry-After counts whole seconds (RFC 9110); the message gives the exact wait.
    if (error.retryAfterMs !== undefined) reply.headers["retry-after"] = String(Math.max(1, Math.ceil(error.retryAfterMs / 1000)));
    return reply;
  }
  // Anything else is our bug, not the client's: say so, and keep the details in the log.
  log?.error(`internal error: ${(error as Error)?.stack ?? error}`);
  return jsonReply(500, { error: shown(`internal error: ${(error as Error)?.message ?? String(error)}`) });
}

/** A reply as a web `Response` (an empty body as none: a 204's or a HEAD's may have no other). */
export function toResponse(reply: Reply): Response {
  return new Response(reply.body === "" ? null : (reply.body as BodyInit), { status: reply.status, headers: reply.headers });
}

const openAiTypes: Record<number, string> = { 400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 404: "not_found_error", 413: "invalid_request_error", 429: "rate_limit_error" };

/**
 * `errorReply` in OpenAI's shape, for the /v1 OpenAI routes: `{"error": {"message", "type",
 * "param", "code"}}` with the same status and headers, so OpenAI's clients raise their typed errors.
 */
export function openAiErrorReply(error: unknown, log?: ErrorLog, redact?: (text: string) => string): Reply {
  const reply = errorReply(error, log, redact);
  const message = (JSON.parse(reply.body as string) as { error: string }).error;
  const param = error instanceof RuntimeError && "param" in error && typeof error.param === "string" && error.param ? error.param : null;
  const type = openAiTypes[reply.status] ?? (reply.status >= 500 ? "server_error" : "invalid_request_error");
  const code = reply.status === 404 ? "model_not_found" : error instanceof RuntimeError ? error.code.toLowerCase() : "internal";
  return { ...reply, body: JSON.stringify({ error: { message, type, param, code } }) };
}
