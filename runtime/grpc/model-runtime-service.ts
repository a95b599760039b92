import { create } from "@bufbuild/protobuf";
import type { DescMessage, DescMethod, MessageShape } from "@bufbuild/protobuf";
import { loadPulledModel, modelSize, predictPulledModel, runtimeStatus, unloadPulledModel } from "../call/mod.ts";
import type { ModelMeshOptions } from "../call/mod.ts";
import type { ApiGroup, CallContext } from "../call/mod.ts";
import * as inference from "./proto/grpc_service_pb.ts";
import { ModelRuntime, RuntimeStatusResponse_Status } from "./proto/model_runtime_pb.ts";
import type { GrpcCall, GrpcMethod } from "./inference-service.ts";

/**
 * KServe v2 methods ModelMesh may forward to this runtime, each with the model id written into the
 * request's field 1 (`model_name`, or `name`: ModelMesh's id injection); no others are forwarded.
 */
const FORWARDED = ["ModelInfer", "ModelMetadata", "ModelReady", "ModelConfig", "ModelStatistics"].map((m) => `${inference.GRPCInferenceService.typeName}/${m}`);

type Unary = <I extends DescMessage, O extends DescMessage>(
  method: DescMethod & { input: I; output: O },
  group: ApiGroup,
  handle: (request: MessageShape<I>, call: GrpcCall) => MessageShape<O> | Promise<MessageShape<O>>,
) => GrpcMethod;

/**
 * ModelMesh's `mmesh.ModelRuntime` (call/model-runtime.ts) as gRPC methods. Control calls:
 * loopback-only without admin keys, as the repository API (ModelMesh calls from inside the pod).
 */
export function modelRuntimeMethods(models: CallContext["models"], options: ModelMeshOptions, version: string, unary: Unary): GrpcMethod[] {
  const M = ModelRuntime.method;
  const model = (r: { modelId: string; modelPath: string; modelKey: string }) => ({ id: r.modelId, path: r.modelPath, key: r.modelKey });
  return [
    unary(M.runtimeStatus, "repository", async () => {
      const status = await runtimeStatus(models, options);
      return create(M.runtimeStatus.output, {
        status: RuntimeStatusResponse_Status.READY,
        capacityInBytes: BigInt(status.capacityBytes),
        maxLoadingConcurrency: status.maxLoadingConcurrency,
        modelLoadingTimeoutMs: status.loadTimeoutMs,
        defaultModelSizeInBytes: BigInt(status.defaultModelBytes),
        runtimeVersion: version,
        methodInfos: Object.fromEntries(FORWARDED.map((m) => [m, { idInjectionPath: [1] }])),
      });
    }),
    unary(M.loadModel, "repository", async (r) => create(M.loadModel.output, { sizeInBytes: BigInt(await loadPulledModel(models, options, model(r))) })),
    unary(M.unloadModel, "repository", async (r) => {
      await unloadPulledModel(models, r.modelId);
      return create(M.unloadModel.output);
    }),
    unary(M.predictModelSize, "repository", async (r) => create(M.predictModelSize.output, { sizeInBytes: BigInt(await predictPulledModel(models, options, model(r))) })),
    unary(M.modelSize, "repository", (r) => create(M.modelSize.output, { sizeInBytes: BigInt(modelSize(models, r.modelId)) })),
  ];
}
