import { RuntimeError } from "../core/mod.ts";
import type { ErrorCode } from "../core/mod.ts";
import { ClientAbortedError } from "../call/mod.ts";
import { shownError } from "../call/mod.ts";

/** gRPC's status codes (grpc/doc/statuscodes.md). */
export const GRPC_STATUS = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

/** Triton's mapping (src/grpc/grpc_utils.cc), plus ours: a rate limit is RESOURCE_EXHAUSTED, as gRPC's guide says. */
const statusByCode: Record<ErrorCode, number> = {
  INVALID_ARG: GRPC_STATUS.INVALID_ARGUMENT,
  ALREADY_EXISTS: GRPC_STATUS.ALREADY_EXISTS,
  CANCELLED: GRPC_STATUS.CANCELLED,
  NOT_FOUND: GRPC_STATUS.NOT_FOUND,
  RESOURCE_EXHAUSTED: GRPC_STATUS.RESOURCE_EXHAUSTED,
  RATE_LIMITED: GRPC_STATUS.RESOURCE_EXHAUSTED,
  UNAUTHENTICATED: GRPC_STATUS.UNAUTHENTICATED,
  PERMISSION_DENIED: GRPC_STATUS.PERMISSION_DENIED,
  UNSUPPORTED: GRPC_STATUS.UNIMPLEMENTED,
  UNAVAILABLE: GRPC_STATUS.UNAVAILABLE,
  DEADLINE_EXCEEDED: GRPC_STATUS.DEADLINE_EXCEEDED,
  INTERNAL: GRPC_STATUS.INTERNAL,
};

/** A call's failure as gRPC sends it: a status code, its details, and how long to wait before a retry. */
export interface GrpcFailure {
  code: number;
  details: string;
  retryAfterMs?: number;
}

/**
 * The one place where an error becomes a gRPC status. As over HTTP: the message with absolute
 * paths made relative (`redact`) and cut at MAX_ERROR_CHARS; an error that is not a RuntimeError
 * is our bug, logged whole and answered INTERNAL.
 */
export function grpcFailure(error: unknown, log?: (message: string) => void, redact: (text: string) => string = (t) => t): GrpcFailure {
  const shown = (message: string) => shownError(message, redact);
  if (error instanceof ClientAbortedError) return { code: GRPC_STATUS.CANCELLED, details: shown(error.message) };
  if (error instanceof RuntimeError) {
    const failure: GrpcFailure = { code: statusByCode[error.code], details: shown(error.message) };
    if (error.retryAfterMs !== undefined) failure.retryAfterMs = error.retryAfterMs;
    return failure;
  }
  log?.(`internal error: ${(error as Error)?.stack ?? error}`);
  return { code: GRPC_STATUS.INTERNAL, details: shown(`internal error: ${(error as Error)?.message ?? String(error)}`) };
}
