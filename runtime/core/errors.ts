/**
 * The closed set of error codes, after Triton's. Each maps to one HTTP status in
 * `runtime/http/error-status.ts` (HTTP), one gRPC status in `runtime/grpc/grpc-status.ts`, and
 * nowhere else.
 */
export type ErrorCode =
  | "INVALID_ARG" // the request or config is wrong → 400
  | "NOT_FOUND" // unknown function or version → 404
  | "UNAVAILABLE" // known but not ready, queue full, timed out → 503
  | "RESOURCE_EXHAUSTED" // over a size limit (body) → 413
  | "RATE_LIMITED" // over the function's rate_limit → 429 (ours: Triton has no request rate limit)
  | "UNSUPPORTED" // valid but not implemented here → 501
  | "ALREADY_EXISTS" // → 400
  | "UNAUTHENTICATED" // no key, or a key the server does not know → 401 with WWW-Authenticate: Bearer
  | "PERMISSION_DENIED" // a valid key of the wrong kind, or a control request from a foreign Host/Origin → 403
  | "CANCELLED" // the client went away → 400
  | "DEADLINE_EXCEEDED" // a handler call ran past handler_timeout_ms → 504
  | "INTERNAL"; // a bug or a backend failure we cannot blame on the request → 500

/** Every ErrorCode once (the compiler holds this to the union above). */
const CODES: Record<ErrorCode, true> = {
  INVALID_ARG: true,
  NOT_FOUND: true,
  UNAVAILABLE: true,
  RESOURCE_EXHAUSTED: true,
  RATE_LIMITED: true,
  UNSUPPORTED: true,
  ALREADY_EXISTS: true,
  UNAUTHENTICATED: true,
  PERMISSION_DENIED: true,
  CANCELLED: true,
  DEADLINE_EXCEEDED: true,
  INTERNAL: true,
};

/** Whether `value` is one of the codes (one that crossed a process boundary is checked before it is believed). */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && Object.hasOwn(CODES, value);
}

/** An error that is the caller's to see: its message names the field and the value at fault. */
export class RuntimeError extends Error {
  readonly code: ErrorCode;
  /** When trying again could succeed (sent as Retry-After). */
  readonly retryAfterMs?: number;
  /** A 4xx status that replaces the code's own (a handler's HandlerError chose it). */
  readonly status?: number;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; retryAfterMs?: number; status?: number }) {
    super(message, options);
    this.name = "RuntimeError";
    this.code = code;
    if (options?.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
    if (options?.status !== undefined) this.status = options.status;
  }
}

/** Shorthand for the most common case: the request is wrong. */
export function invalidArg(message: string): RuntimeError {
  return new RuntimeError("INVALID_ARG", message);
}
