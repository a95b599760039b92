import { create, fromBinary } from "@bufbuild/protobuf";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { elementCount, invalidArg, RuntimeError } from "../core/mod.ts";
import type { DataType, InferRequest, InferResponse, Parameters, RequestedOutput, Tensor, TensorData } from "../core/mod.ts";
import { checkElementBudget, decodeBinaryTensor, DEFAULT_MAX_ELEMENTS, encodeBinaryTensor, INTEGER_RANGE, isDataType, readShared, sharedOutput, sharedRef, storageFor, withoutSharedKeys } from "../tensor/mod.ts";
import type { ElementLimit, InputHeader, ReadRequest, RequestHeader, SharedMemoryReader, SharedRef } from "../tensor/mod.ts";
import { InferParameterSchema, InferTensorContentsSchema, ModelInferResponseSchema } from "./proto/grpc_service_pb.ts";
import type { InferParameter, InferTensorContents, ModelInferResponse } from "./proto/grpc_service_pb.ts";
import type { ModelInferRequestWire } from "./proto/infer_request_wire_pb.ts";

/** TypedArrays use the host's byte order; raw contents are little-endian. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * A ModelInferRequest read as the HTTP body is: its structure, names, datatypes and shapes first,
 * as `header` for the caller to check against the model; `decode` then checks the element budget
 * and only then decodes any tensor data. Raw contents (`raw_input_contents`, one entry per input
 * in order) are viewed, not copied; typed contents (`contents.fp32_contents`…) arrive still
 * encoded (infer_request_wire.proto) and are decoded last, once their element count, read on the
 * wire, matches the shape: a message costs its own size until then. FP16 and BF16 only raw
 * (Triton's rule).
 */
export function readModelInfer(message: ModelInferRequestWire, options: { sharedMemory?: SharedMemoryReader } = {}): ReadRequest {
  const { inputs, rawInputContents: raw } = message;
  if (inputs.length === 0) throw invalidArg("request inputs must not be empty");
  const names = new Set<string>();
  // Inputs in shared memory have no raw contents: the others take raw_input_contents in order (Triton's rule).
  let rawIndex = 0;
  const headers: (InputHeader & { parameters: Parameters; shared: SharedRef | undefined; raw: number })[] = inputs.map((input, i) => {
    const { name, datatype } = input;
    if (name === "") throw invalidArg(`inputs[${i}].name must not be empty`);
    if (names.has(name)) throw invalidArg(`input '${name}' appears more than once in the request`);
    names.add(name);
    if (!isDataType(datatype)) throw invalidArg(`input '${name}': unknown datatype '${cut(datatype)}'`);
    const given = parameters(input.parameters, `input '${name}'`);
    const shared = sharedRef(given, `input '${name}'`);
    if (shared) {
      if (input.contents.byteLength > 0) throw invalidArg(`input '${name}': set only one of contents and shared_memory_region`);
      if (!options.sharedMemory) throw invalidArg(`input '${name}': this server has no shared memory regions`);
    } else if (raw.length > 0 && input.contents.byteLength > 0) {
      throw invalidArg(`input '${name}': has contents while the request uses raw_input_contents; send every input one way`);
    }
    return { name, datatype, shape: shapeOf(input.shape, name), parameters: shared ? withoutSharedKeys(given) : given, shared, raw: shared || raw.length === 0 ? -1 : rawIndex++ };
  });
  if (raw.length > 0 && raw.length !== rawIndex) {
    throw invalidArg(`raw_input_contents has ${raw.length} entries for ${rawIndex} inputs not in shared memory; send one per input, in the order of inputs`);
  }
  const outputs = requestedOutputs(message.outputs);
  const request: InferRequest = { parameters: parameters(message.parameters, "request"), inputs: [] };
  if (message.id !== "") request.id = message.id;
  if (outputs) request.outputs = outputs;
  const header: RequestHeader = { inputs: headers, outputs, parameters: request.parameters };
  const decode = (limit: ElementLimit = {}): InferRequest => {
    checkElementBudget(
      headers.map((h) => ({ name: h.name, datatype: h.datatype, elements: elementCount(h.shape) })),
      limit.maxElements ?? DEFAULT_MAX_ELEMENTS,
      limit.limitName,
    );
    request.inputs = headers.map((h, i) => {
      const target = { name: h.name, datatype: h.datatype, shape: h.shape };
      const data = h.shared
        ? decodeBinaryTensor(readShared(h.shared, target, options.sharedMemory!), target)
        : h.raw >= 0
          ? decodeBinaryTensor(raw[h.raw]!, target)
          : typedData(inputs[i]!.contents, target);
      return Object.keys(h.parameters).length > 0 ? { name: h.name, tensor: { ...target, data }, parameters: h.parameters } : { name: h.name, tensor: { ...target, data } };
    });
    return request;
  };
  return { header, decode };
}

/**
 * A response as Triton's gRPC server sends it: the outputs the request asked for (all, when it
 * named none), each in `raw_output_contents`, one entry per output in order (BYTES elements with
 * their 4-byte lengths).
 */
export function encodeModelInfer(response: InferResponse, request: InferRequest): ModelInferResponse {
  const chosen = request.outputs?.length ? request.outputs.map((r) => outputNamed(response, r.name)) : response.outputs;
  const shared = request.outputs?.length ? request.outputs.map((r) => r.parameters?.shared_memory_region !== undefined) : [];
  const id = response.id ?? request.id;
  return create(ModelInferResponseSchema, {
    modelName: response.modelName,
    modelVersion: response.modelVersion,
    ...(id && { id }),
    ...(response.parameters && { parameters: toParameters(response.parameters) }),
    outputs: chosen.map(({ name, tensor }) => ({ name, datatype: tensor.datatype, shape: tensor.shape.map(BigInt) })),
    // An output written to shared memory has an empty entry, so the others keep their places (Triton's).
    rawOutputContents: chosen.map(({ name, tensor }, i) => (shared[i] ? new Uint8Array() : rawBytes(name, tensor))),
  });
}

function outputNamed(response: InferResponse, name: string) {
  const output = response.outputs.find((o) => o.name === name);
  if (output === undefined) throw invalidArg(`unexpected inference output '${name}' for model '${response.modelName}'`);
  return output;
}

/** A tensor's raw contents: a view of its storage where it is little-endian already. */
function rawBytes(name: string, tensor: Tensor): Uint8Array {
  const { data } = tensor;
  if (data.length !== elementCount(tensor.shape)) {
    throw new Error(`output '${name}': ${data.length} elements of data for shape [${tensor.shape.join(",")}]`);
  }
  if (!Array.isArray(data) && LITTLE_ENDIAN) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  // BYTES with their lengths, or a big-endian host's elements swapped: the binary extension's encoding.
  return encodeBinaryTensor(tensor);
}

function requestedOutputs(outputs: ModelInferRequestWire["outputs"]): RequestedOutput[] | undefined {
  if (outputs.length === 0) return undefined;
  const names = new Set<string>();
  return outputs.map(({ name, parameters: raw }, i) => {
    if (name === "") throw invalidArg(`outputs[${i}].name must not be empty`);
    if (names.has(name)) throw invalidArg(`output '${name}' is requested more than once`);
    names.add(name);
    const params = parameters(raw, `output '${name}'`);
    sharedOutput(params, name, params.binary_data);
    return Object.keys(params).length > 0 ? { name, parameters: params } : { name };
  });
}

function shapeOf(dims: bigint[], name: string): number[] {
  return dims.map((d, i) => {
    if (d < 0n || d > BigInt(Number.MAX_SAFE_INTEGER)) {
      throw invalidArg(`input '${name}': shape [${dims.join(",")}] has invalid dimension ${d} at index ${i}; dimensions are non-negative integers`);
    }
    return Number(d);
  });
}

/** Parameters as the scheduler reads them; 64-bit integers only where a number holds them exactly. */
function parameters(raw: { [key: string]: InferParameter }, where: string): Parameters {
  const out: Parameters = {};
  for (const key in raw) {
    const choice = raw[key]!.parameterChoice;
    switch (choice.case) {
      case "boolParam":
      case "stringParam":
      case "doubleParam":
        out[key] = choice.value;
        break;
      case "int64Param":
      case "uint64Param":
        if (choice.value > BigInt(Number.MAX_SAFE_INTEGER) || choice.value < BigInt(Number.MIN_SAFE_INTEGER)) {
          throw invalidArg(`${where} parameter '${key}': ${choice.value} is beyond what this server reads exactly (±2^53)`);
        }
        out[key] = Number(choice.value);
        break;
      default:
        throw invalidArg(`${where} parameter '${key}' has no value`);
    }
  }
  return out;
}

function toParameters(values: Parameters): { [key: string]: MessageInitShape<typeof InferParameterSchema> } {
  const out: { [key: string]: MessageInitShape<typeof InferParameterSchema> } = {};
  for (const [key, value] of Object.entries(values)) {
    out[key] = {
      parameterChoice:
        typeof value === "boolean"
          ? { case: "boolParam", value }
          : typeof value === "string"
            ? { case: "stringParam", value }
            : Number.isSafeInteger(value)
              ? { case: "int64Param", value: BigInt(value) }
              : { case: "doubleParam", value },
    };
  }
  return out;
}

/** Which repeated field of InferTensorContents carries each datatype (FP16 and BF16: none). */
const CONTENTS_FIELD: Record<DataType, keyof InferTensorContents | undefined> = {
  BOOL: "boolContents",
  INT8: "intContents",
  INT16: "intContents",
  INT32: "intContents",
  INT64: "int64Contents",
  UINT8: "uintContents",
  UINT16: "uintContents",
  UINT32: "uintContents",
  UINT64: "uint64Contents",
  FP32: "fp32Contents",
  FP64: "fp64Contents",
  BYTES: "bytesContents",
  FP16: undefined,
  BF16: undefined,
};

const SNAKE: Partial<Record<keyof InferTensorContents, string>> = {
  boolContents: "bool_contents",
  intContents: "int_contents",
  int64Contents: "int64_contents",
  uintContents: "uint_contents",
  uint64Contents: "uint64_contents",
  fp32Contents: "fp32_contents",
  fp64Contents: "fp64_contents",
  bytesContents: "bytes_contents",
};

function typedData(encoded: Uint8Array, target: { name: string; datatype: DataType; shape: readonly number[] }): TensorData {
  const { name, datatype, shape } = target;
  const field = CONTENTS_FIELD[datatype];
  if (field === undefined) throw invalidArg(`input '${name}': ${datatype} travels only as raw bytes (raw_input_contents), as in Triton`);
  const count = elementCount(shape);
  const held = contentsCount(encoded, FIELD_NUMBER[field]!, FIXED_SIZE[field]);
  if (held !== count) {
    throw invalidArg(`input '${name}': ${SNAKE[field]} holds ${held} elements for ${datatype} shape [${shape.join(",")}] (${count} expected)`);
  }
  const values = (held === 0 ? [] : decodeContents(encoded)[field]) as unknown[];
  if (datatype === "BYTES") return values as Uint8Array[];
  if (datatype === "BOOL") return Uint8Array.from(values as boolean[], (b) => (b ? 1 : 0));
  const range = INTEGER_RANGE[datatype];
  if (range) {
    for (let i = 0; i < values.length; i++) {
      const v = values[i] as number;
      if (v < range[0] || v > range[1]) throw invalidArg(`input '${name}': element ${i} (${v}) is out of range for ${datatype}`);
    }
  }
  const Storage = storageFor(datatype);
  if (Storage === undefined) throw new RuntimeError("INTERNAL", `no storage for ${datatype}`);
  return (Storage as unknown as { from(values: unknown[]): TensorData }).from(values);
}

function decodeContents(encoded: Uint8Array): InferTensorContents {
  try {
    return fromBinary(InferTensorContentsSchema, encoded);
  } catch (error) {
    throw invalidArg(`malformed tensor contents: ${(error as Error).message}`);
  }
}

/** InferTensorContents' field numbers, and the byte size of the fixed-width ones. */
const FIELD_NUMBER: Partial<Record<keyof InferTensorContents, number>> = {
  boolContents: 1,
  intContents: 2,
  int64Contents: 3,
  uintContents: 4,
  uint64Contents: 5,
  fp32Contents: 6,
  fp64Contents: 7,
  bytesContents: 8,
};
const FIXED_SIZE: Partial<Record<keyof InferTensorContents, number>> = { fp32Contents: 4, fp64Contents: 8 };
const BYTES_FIELD = 8;

/**
 * How many elements an encoded InferTensorContents holds in field `fieldNo`, read from the wire
 * without decoding them: one per tag, or per varint (or fixed-size slot) of a packed run.
 */
function contentsCount(encoded: Uint8Array, fieldNo: number, fixedSize: number | undefined): number {
  const reader = new BinaryReader(encoded);
  let count = 0;
  try {
    while (reader.pos < reader.len) {
      const [no, wireType] = reader.tag();
      if (no !== fieldNo || wireType !== WireType.LengthDelimited || fieldNo === BYTES_FIELD) {
        reader.skip(wireType, no);
        if (no === fieldNo) count++;
        continue;
      }
      const run = reader.bytes(); // a packed run, without its length prefix
      if (fixedSize) count += Math.ceil(run.byteLength / fixedSize);
      // Varints: one element per byte without the continuation bit.
      else for (const byte of run) if (byte < 0x80) count++;
    }
  } catch (error) {
    throw invalidArg(`malformed tensor contents: ${(error as Error).message}`);
  }
  return count;
}

function cut(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
