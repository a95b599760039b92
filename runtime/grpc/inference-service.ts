import { create, fromBinary, fromJson, toBinary } from "@bufbuild/protobuf";
import type { DescMessage, DescMethod, JsonValue, MessageShape } from "@bufbuild/protobuf";
import { RuntimeError } from "../core/mod.ts";
import { inferMessage, loadOverrides, modelConfig, modelMetadata, repositoryName, statistics, unhealthy } from "../call/mod.ts";
import { createAuthorizer } from "../call/mod.ts";
import type { AccessOptions, ApiGroup, ErrorLog, HeaderLookup, ServerContext } from "../call/mod.ts";
import { encodeModelInfer, readModelInfer } from "./infer-message.ts";
import { grpcFailure } from "./grpc-status.ts";
import { modelRuntimeMethods } from "./model-runtime-service.ts";
import type { ModelMeshOptions } from "../call/mod.ts";
import type { GrpcFailure } from "./grpc-status.ts";
import * as inference from "./proto/grpc_service_pb.ts";
import { Health, HealthCheckResponse_ServingStatus } from "./proto/health_pb.ts";
import { ModelConfigSchema } from "./proto/model_config_pb.ts";
import { ModelInferRequestWireSchema } from "./proto/infer_request_wire_pb.ts";
import type { ModelInferRequestWire } from "./proto/infer_request_wire_pb.ts";

/** One gRPC call as a method sees it, whichever server carries it. */
export interface GrpcCall {
  /** Request metadata by lower-case name; `host` is the call's authority. */
  readonly header: HeaderLookup;
  /** Aborted when the client cancels, its deadline passes or the connection goes. */
  readonly signal: AbortSignal;
}

/**
 * A method as a gRPC server registers it: its path, how its messages are (de)serialized, and its
 * handler — `unary` for one request and one response, `stream` where either side streams
 * (`send` resolves once the message may be followed by another: backpressure).
 */
export interface GrpcMethod {
  readonly path: string;
  readonly requestStream: boolean;
  readonly responseStream: boolean;
  decode(bytes: Uint8Array): unknown;
  encode(message: unknown): Uint8Array;
  unary?(request: unknown, call: GrpcCall): Promise<unknown>;
  stream?(requests: AsyncIterable<unknown>, send: (message: unknown) => Promise<void>, call: GrpcCall): Promise<void>;
}

/** Every method the gRPC port serves, and the one mapping of its errors to a gRPC status. */
export interface GrpcService {
  readonly methods: readonly GrpcMethod[];
  failure(error: unknown): GrpcFailure;
  /** The largest message a client may send: the server's `--max-input-size`. */
  readonly maxMessageBytes: number;
}

/** What the gRPC service needs from the runtime: what the HTTP routes are given. */
export type GrpcContext = Pick<ServerContext, "models" | "maxInputBytes" | "maxElements" | "server" | "draining" | "strictReadiness" | "sharedMemory"> & {
  /** Keys and trusted origins, as HTTP's (absent: no keys). */
  access?: AccessOptions;
  log: ErrorLog;
  /** Aborted when a shutdown begins: streams stop taking requests, answer those they hold and end. */
  drained?: AbortSignal;
  /** Serve ModelMesh's model-runtime SPI too (`--modelmesh-root`). */
  modelmesh?: ModelMeshOptions;
};

/** Requests of one ModelStreamInfer stream in flight at once; past it, the stream is read no further until one is answered. */
export const STREAM_IN_FLIGHT = 64;

/**
 * KServe v2's `inference.GRPCInferenceService` with Triton's extensions, and `grpc.health.v1.Health`,
 * on the same call pipeline, access policy, statistics and limits as HTTP (`kserveHandlers`,
 * `repositoryHandlers`). Plain data in and out: an adapter (adapters/grpc-server.ts) puts it on a port.
 */
export function createGrpcService(ctx: GrpcContext): GrpcService {
  const authorize = createAuthorizer({ ...ctx.access });
  const models = ctx.models;
  const S = inference.GRPCInferenceService.method;
  const version = (v: string) => (v === "" ? undefined : v);
  const ready = () => unhealthy(models, "ready", ctx.draining, ctx.strictReadiness ?? true) === undefined;
  const regions = () => ctx.sharedMemory ?? unsupported("system shared memory");
  const infer = async (request: ModelInferRequestWire, call: GrpcCall) => {
    const { request: decoded, response } = await inferMessage(ctx, {
      name: request.modelName,
      version: version(request.modelVersion),
      header: call.header,
      client: call,
      read: (sharedMemory) => readModelInfer(request, { sharedMemory }),
    });
    return encodeModelInfer(response, decoded);
  };

  const methods: GrpcMethod[] = [
    unary(S.serverLive, "health", () => create(inference.ServerLiveResponseSchema, { live: true })),
    unary(S.serverReady, "health", () => create(inference.ServerReadyResponseSchema, { ready: ready() })),
    unary(S.modelReady, "metadata", (r) => create(inference.ModelReadyResponseSchema, { ready: models.readiness(r.name, version(r.version)).ready })),
    unary(S.serverMetadata, "metadata", () => create(inference.ServerMetadataResponseSchema, ctx.server)),
    unary(S.modelMetadata, "metadata", async (r, call) => json(inference.ModelMetadataResponseSchema, await modelMetadata(models, r.name, version(r.version), call.signal))),
    unary(S.modelConfig, "metadata", async (r, call) => create(inference.ModelConfigResponseSchema, { config: json(ModelConfigSchema, await modelConfig(models, r.name, version(r.version), call.signal)) })),
    unary(S.modelStatistics, "statistics", (r) => json(inference.ModelStatisticsResponseSchema, statistics(models, r.name || undefined, version(r.version)))),
    // Inference requests are read with their tensor contents still encoded (infer_request_wire.proto).
    unary({ ...S.modelInfer, input: ModelInferRequestWireSchema }, "inference", infer),
    stream({ ...S.modelStreamInfer, input: ModelInferRequestWireSchema }, "inference", (requests, send, call) => streamInfer(requests, ctx.drained, send, call, infer, (e) => grpcFailure(e, undefined, (t) => models.redact(t)))),
    unary(S.repositoryIndex, "repository", (r) =>
      create(inference.RepositoryIndexResponseSchema, { models: models.index({ readyOnly: r.ready }).map((e) => ({ name: e.name, version: e.version ?? "", state: e.state, reason: e.reason })) }),
    ),
    unary(S.repositoryModelLoad, "repository", async (r) => {
      const name = repositoryName(r.modelName);
      await models.load(name, loadOverrides(name, repositoryParameters(r.parameters), models.limits));
      return create(inference.RepositoryModelLoadResponseSchema);
    }),
    unary(S.repositoryModelUnload, "repository", async (r) => {
      const name = repositoryName(r.modelName);
      const parameters = repositoryParameters(r.parameters);
      const flag = (key: string) => {
        const value = parameters[key] ?? false;
        if (typeof value !== "boolean") throw new RuntimeError("INVALID_ARG", `parameters.${key} must be a bool_param, not ${JSON.stringify(String(value))}`);
        return value;
      };
      await models.unload(name, { dependents: flag("unload_dependents"), disable: flag("disable") });
      return create(inference.RepositoryModelUnloadResponseSchema);
    }),
    // System shared memory as over HTTP (call/shared-memory-regions.ts). CUDA shared memory: no
    // region to list or unregister (a client's clean-up before and after its run succeeds); registering says why not.
    unary(S.systemSharedMemoryStatus, "shared-memory", async (r, call) =>
      create(inference.SystemSharedMemoryStatusResponseSchema, {
        regions: Object.fromEntries(regions().status(await regions().ownerOf(call.header), r.name).map((s) => [s.name, { name: s.name, key: s.key, offset: BigInt(s.offset), byteSize: BigInt(s.byte_size) }])),
      }),
    ),
    unary(S.systemSharedMemoryRegister, "shared-memory", async (r, call) => {
      regions().register(await regions().ownerOf(call.header), r.name, r.key, wholeBytes(r.offset, "offset"), wholeBytes(r.byteSize, "byte_size"));
      return create(inference.SystemSharedMemoryRegisterResponseSchema);
    }),
    unary(S.systemSharedMemoryUnregister, "shared-memory", async (r, call) => {
      regions().unregister(await regions().ownerOf(call.header), r.name);
      return create(inference.SystemSharedMemoryUnregisterResponseSchema);
    }),
    unary(S.cudaSharedMemoryStatus, "shared-memory", (r) => noRegion(r.name, inference.CudaSharedMemoryStatusResponseSchema)),
    unary(S.cudaSharedMemoryRegister, "shared-memory", () => unsupported("CUDA shared memory")),
    unary(S.cudaSharedMemoryUnregister, "shared-memory", () => create(inference.CudaSharedMemoryUnregisterResponseSchema)),
    // grpc.health.v1: the server as a whole ("") or the inference service, SERVING once ready.
    unary(Health.method.check, "health", (r) => create(Health.method.check.output, { status: healthOf(r.service, ready) })),
    stream(Health.method.watch, "health", async (requests, send, call) => {
      let service = "";
      for await (const r of requests) service = r.service;
      // Polled each second; a shutdown sends NOT_SERVING and ends the stream.
      let last: HealthCheckResponse_ServingStatus | undefined;
      for (;;) {
        const status = healthOf(service, ready, true);
        if (status !== last) await send(create(Health.method.watch.output, { status }));
        last = status;
        if (call.signal.aborted || ctx.drained?.aborted) return;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, 1000);
          function done() {
            clearTimeout(timer);
            call.signal.removeEventListener("abort", done);
            ctx.drained?.removeEventListener("abort", done);
            resolve();
          }
          call.signal.addEventListener("abort", done, { once: true });
          ctx.drained?.addEventListener("abort", done, { once: true });
        });
      }
    }),
  ];
  if (ctx.modelmesh) methods.push(...modelRuntimeMethods(models, ctx.modelmesh, ctx.server.version, unary));

  /** A unary method: access checked for its group, then the handler. */
  function unary<I extends DescMessage, O extends DescMessage>(
    method: DescMethod & { input: I; output: O },
    group: ApiGroup,
    handle: (request: MessageShape<I>, call: GrpcCall) => MessageShape<O> | Promise<MessageShape<O>>,
  ): GrpcMethod {
    const path = pathOf(method);
    return {
      ...codec(method, path),
      unary: async (request, call) => {
        await authorize("gRPC", path, call.header, group);
        return handle(request as MessageShape<I>, call);
      },
    };
  }

  function stream<I extends DescMessage, O extends DescMessage>(
    method: DescMethod & { input: I; output: O },
    group: ApiGroup,
    handle: (requests: AsyncIterable<MessageShape<I>>, send: (message: MessageShape<O>) => Promise<void>, call: GrpcCall) => Promise<void>,
  ): GrpcMethod {
    const path = pathOf(method);
    return {
      ...codec(method, path),
      stream: async (requests, send, call) => {
        await authorize("gRPC", path, call.header, group);
        await handle(requests as AsyncIterable<MessageShape<I>>, send as (message: MessageShape<O>) => Promise<void>, call);
      },
    };
  }

  return { methods, failure: (error) => grpcFailure(error, ctx.log.error, (t) => models.redact(t)), maxMessageBytes: ctx.maxInputBytes };
}

/**
 * ModelStreamInfer: each request answered as soon as it is done, up to STREAM_IN_FLIGHT at once
 * (the stream is read no further until one finishes, so a client that only writes is held by
 * HTTP/2 flow control). A request that fails is answered in `error_message` and the stream goes
 * on, as in Triton — unless the client sent `triton_grpc_error: true`, when the first failure ends
 * the stream with its gRPC status. The stream ends once the client has finished sending and every
 * request is answered.
 */
async function streamInfer(
  requests: AsyncIterable<ModelInferRequestWire>,
  drained: AbortSignal | undefined,
  send: (message: inference.ModelStreamInferResponse) => Promise<void>,
  call: GrpcCall,
  infer: (request: ModelInferRequestWire, call: GrpcCall) => Promise<inference.ModelInferResponse>,
  failure: (error: unknown) => GrpcFailure,
): Promise<void> {
  const statusErrors = call.header("triton_grpc_error") === "true";
  const inFlight = new Set<Promise<void>>();
  let ended: unknown;
  // The first failure, when it ends the stream, stops its reading at once.
  const failed = new AbortController();
  const one = async (request: ModelInferRequestWire) => {
    try {
      const response = await infer(request, call);
      await send(create(inference.ModelStreamInferResponseSchema, { inferResponse: response }));
    } catch (error) {
      if (statusErrors) {
        ended ??= error;
        failed.abort();
        return;
      }
      const answer = { modelName: request.modelName, modelVersion: request.modelVersion, id: request.id };
      await send(create(inference.ModelStreamInferResponseSchema, { errorMessage: failure(error).details, inferResponse: answer })).catch(() => {});
    }
  };
  for await (const request of until(requests, drained ? AbortSignal.any([drained, failed.signal]) : failed.signal)) {
    if (ended !== undefined) break;
    const task: Promise<void> = one(request).finally(() => inFlight.delete(task));
    inFlight.add(task);
    if (inFlight.size >= STREAM_IN_FLIGHT) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  if (ended !== undefined) throw ended;
}

/**
 * The messages of `source` until `stop` aborts (then no more are read). Its listener on `stop` (the
 * server's drain signal lives as long as the server) is removed when the stream ends: left there, it
 * held every message the stream had read, through the race each read made with it.
 */
async function* until<T>(source: AsyncIterable<T>, stop: AbortSignal | undefined): AsyncIterable<T> {
  if (!stop) return yield* source;
  const iterator = source[Symbol.asyncIterator]();
  let onStop = () => {};
  const stopped = new Promise<IteratorResult<T>>((resolve) => {
    onStop = () => resolve({ done: true, value: undefined });
    if (stop.aborted) onStop();
    else stop.addEventListener("abort", onStop, { once: true });
  });
  try {
    for (;;) {
      const next = await Promise.race([iterator.next(), stopped]);
      if (next.done) return;
      yield next.value;
    }
  } finally {
    stop.removeEventListener("abort", onStop);
  }
}

function pathOf(method: DescMethod): string {
  return `/${method.parent.typeName}/${method.name}`;
}

function codec(method: DescMethod, path: string): Omit<GrpcMethod, "unary" | "stream"> {
  const streaming = method.methodKind;
  return {
    path,
    requestStream: streaming === "client_streaming" || streaming === "bidi_streaming",
    responseStream: streaming === "server_streaming" || streaming === "bidi_streaming",
    decode: (bytes) => decodeMessage(method.input, bytes),
    encode: (message) => toBinary(method.output, message as MessageShape<DescMessage>),
  };
}

function decodeMessage(schema: DescMessage, bytes: Uint8Array): unknown {
  try {
    return fromBinary(schema, bytes);
  } catch (error) {
    throw new RuntimeError("INVALID_ARG", `malformed ${schema.typeName} message: ${(error as Error).message}`);
  }
}

/** A message from the JSON the HTTP routes answer (the protobuf JSON mapping; keys HTTP adds are dropped). */
function json<S extends DescMessage>(schema: S, value: unknown): MessageShape<S> {
  return fromJson(schema, value as JsonValue, { ignoreUnknownFields: true });
}

/** Repository parameters as the HTTP body's `parameters` holds them (bytes stay bytes). */
function repositoryParameters(raw: { [key: string]: inference.ModelRepositoryParameter }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key in raw) {
    const choice = raw[key]!.parameterChoice;
    if (choice.case === undefined) throw new RuntimeError("INVALID_ARG", `parameter '${key}' has no value`);
    out[key] = choice.case === "int64Param" ? Number(choice.value) : choice.value;
  }
  return out;
}

function noRegion<S extends DescMessage>(name: string, schema: S): MessageShape<S> {
  if (name !== "") throw new RuntimeError("NOT_FOUND", `Unable to find cuda shared memory region: '${name}'`);
  return create(schema);
}

/** A uint64 byte count as a number, refused beyond what one holds exactly. */
function wholeBytes(value: bigint, field: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new RuntimeError("INVALID_ARG", `shared memory register request: '${field}' ${value} is beyond any shared-memory object`);
  return Number(value);
}

function unsupported(what: string): never {
  throw new RuntimeError("UNSUPPORTED", `${what} is not supported by this server; send tensors in the request (raw_input_contents)`);
}

const SERVICES = new Set(["", "inference.GRPCInferenceService"]);

function healthOf(service: string, ready: () => boolean, watching = false): HealthCheckResponse_ServingStatus {
  if (!SERVICES.has(service)) {
    if (watching) return HealthCheckResponse_ServingStatus.SERVICE_UNKNOWN;
    throw new RuntimeError("NOT_FOUND", `unknown service '${service.slice(0, 80)}': this server answers for '' and 'inference.GRPCInferenceService'`);
  }
  return ready() ? HealthCheckResponse_ServingStatus.SERVING : HealthCheckResponse_ServingStatus.NOT_SERVING;
}

