// KServe v2 over gRPC: Triton's GRPCInferenceService and grpc.health.v1 as plain methods on the
// call pipeline; adapters/grpc-server.ts serves them with @grpc/grpc-js.
export { createGrpcService, STREAM_IN_FLIGHT } from "./inference-service.ts";
export type { GrpcCall, GrpcContext, GrpcMethod, GrpcService } from "./inference-service.ts";
export { GRPC_STATUS, grpcFailure } from "./grpc-status.ts";
export type { GrpcFailure } from "./grpc-status.ts";
