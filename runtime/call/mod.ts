// The call pipeline: what every protocol's route runs for a call — admission, decode, schedule,
// encode — so KServe HTTP, the Node fast lane and /v1/functions (and gRPC and OpenAI next) share it.
export { admit } from "./admission.ts";
export type { Admitted, Call, CallContext } from "./admission.ts";
export { inferCall } from "./infer-call.ts";
export { inferMessage } from "./message-call.ts";
export type { MessageCall } from "./message-call.ts";
export { functionCall } from "./function-call.ts";
export { generateCall } from "./generate-call.ts";
export { openAiCall, openAiModels } from "./openai-call.ts";
export type { OpenAiAnswer, OpenAiKind } from "./openai-call.ts";
export { OpenAiParamError } from "./openai-request.ts";
export { embeddingsCall } from "./openai-embeddings.ts";
export { ClientAbortedError, readBody, requestBody, takeBody } from "./read-body.ts";
export type { HeaderLookup } from "./read-body.ts";
export { bearerKey } from "./bearer-key.ts";
export type { DirectBody, ServeEnv } from "./direct-body.ts";
export { ClientConnections } from "./client-connections.ts";
export type { ClientConnection } from "./client-connections.ts";
export { jsonReply } from "./reply.ts";
export type { Reply } from "./reply.ts";
export { modelConfig, modelMetadata, statistics, unhealthy } from "./server-info.ts";
export { loadOverrides, repositoryName } from "./repository-load.ts";
export { loadPulledModel, MODELMESH_FORMATS, modelSize, predictPulledModel, runtimeStatus, unloadPulledModel } from "./model-runtime.ts";
export type { ModelMeshOptions } from "./model-runtime.ts";
export { MAX_REGIONS, MAX_REGIONS_PER_KEY, regionOwner, SharedMemoryRegions } from "./shared-memory-regions.ts";
export type { OwnedRegions, RegionOwner } from "./shared-memory-regions.ts";
export type { RegionStatus } from "./shared-memory-regions.ts";
