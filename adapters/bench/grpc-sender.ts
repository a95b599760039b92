import { create, toBinary } from "@bufbuild/protobuf";
import { credentials, makeGenericClientConstructor, status } from "@grpc/grpc-js";
import type { Client, ServiceError } from "@grpc/grpc-js";
import { ModelInferRequestSchema } from "../../runtime/grpc/proto/grpc_service_pb.ts";
import { BenchError } from "./bench-error.ts";
import type { HttpSender } from "./http-sender.ts";
import type { EncodedRequest } from "./request-body.ts";

const INFER = {
  ModelInfer: {
    path: "/inference.GRPCInferenceService/ModelInfer",
    requestStream: false,
    responseStream: false,
    // Encoded once, answered as bytes: the client pays for neither, as the HTTP sender reads bytes.
    requestSerialize: (message: Buffer) => message,
    requestDeserialize: (bytes: Buffer) => bytes,
    responseSerialize: (message: Buffer) => message,
    responseDeserialize: (bytes: Buffer) => bytes,
  },
};

/**
 * `send()` as ModelInfer calls over one gRPC channel (HTTP/2 multiplexes every call in flight on
 * it, as perf_analyzer's gRPC client does). The request is the binary HTTP `request` carried as a
 * ModelInferRequest: its JSON header's inputs, each input's bytes in `raw_input_contents`.
 */
export function createGrpcSender(address: string, model: string, request: EncodedRequest, version?: string): HttpSender {
  const message = Buffer.from(toBinary(ModelInferRequestSchema, inferRequest(model, request, version)));
  const Service = makeGenericClientConstructor(INFER, "GRPCInferenceService");
  const client = new Service(address, credentials.createInsecure(), { "grpc.max_receive_message_length": -1, "grpc.max_send_message_length": -1 }) as unknown as Client & {
    ModelInfer(request: Buffer, callback: (error: ServiceError | null) => void): void;
  };
  return {
    send: () =>
      new Promise((resolve) =>
        client.ModelInfer(message, (error) => resolve(error ? `gRPC ${status[error.code] ?? error.code}: ${error.details}` : undefined)),
      ),
    close: async () => client.close(),
  };
}

function inferRequest(model: string, request: EncodedRequest, version = "") {
  const headerLength = Number(request.headers["inference-header-content-length"]);
  if (!(headerLength > 0)) throw new BenchError("the gRPC sender carries a binary request (built with binary: true)");
  const header = JSON.parse(new TextDecoder().decode(request.body.subarray(0, headerLength))) as {
    inputs: { name: string; datatype: string; shape: number[]; parameters: { binary_data_size: number } }[];
  };
  let at = headerLength;
  const raw = header.inputs.map((input) => {
    const bytes = request.body.subarray(at, at + input.parameters.binary_data_size);
    at += bytes.byteLength;
    return bytes;
  });
  return create(ModelInferRequestSchema, {
    modelName: model,
    modelVersion: version,
    inputs: header.inputs.map((input) => ({ name: input.name, datatype: input.datatype, shape: input.shape.map(BigInt) })),
    rawInputContents: raw,
  });
}
