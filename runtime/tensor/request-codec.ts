import { invalidArg } from "../core/errors.ts";
import type { InferInput, InferRequest, Parameters, RequestedOutput } from "../core/inference.ts";
import { type DataType, elementCount, type TensorData } from "../core/tensor.ts";
import { parseJsonLossless } from "./_lossless-json.ts";
import { decodeBinaryTensor } from "./binary-tensor.ts";
import { byteSize, isDataType } from "./datatypes.ts";
import { decodeJsonData, needsLosslessJson } from "./json-tensor.ts";

/** The model's single input, as the HTTP layer supplies it for a raw binary request. */
export interface RawInputSignature {
  name: string;
  datatype: DataType;
  /** Full shape, batch dimension set to 1 by the caller for batching models; at most one -1. */
  shape: readonly number[];
}

type Json = Record<string, unknown>;

const utf8Strict = new TextDecoder("utf-8", { fatal: true });

/**
 * Decodes a KServe v2 inference request body. `headerLength` undefined: the body is JSON only.
 * `headerLength` > 0 (the `Inference-Header-Content-Length` value): the body is that many bytes of
 * JSON followed by the binary sections of the inputs that carry `parameters.binary_data_size`, in
 * the order of `inputs`, which must end exactly at the end of the body. (0 is a raw binary request:
 * use `decodeRawBinaryRequest`.) Structure is checked by hand, not zod, since this is the hot path.
 *
 * Output selection: with `outputs`, each `RequestedOutput.binary` is resolved here (per-output
 * `binary_data` wins over `binary_data_output`). Without `outputs` (or with an empty array), `outputs`
 * is undefined and `binary_data_output` stays in `request.parameters`, where the response encoder
 * reads it. Transport keys (`binary_data_size`, `binary_data`) are dropped from tensor parameters.
 */
export function decodeInferRequest(body: Uint8Array, options: { headerLength?: number } = {}): InferRequest {
  const { headerLength } = options;
  if (headerLength !== undefined) {
    if (!Number.isSafeInteger(headerLength) || headerLength < 0) {
      throw invalidArg(`Inference-Header-Content-Length must be a non-negative integer, got ${headerLength}`);
    }
    if (headerLength === 0) {
      throw new Error("decodeInferRequest: header length 0 is a raw binary request; call decodeRawBinaryRequest");
    }
    if (headerLength > body.byteLength) {
      throw invalidArg(
        `Inference-Header-Content-Length ${headerLength} is larger than the request body (${body.byteLength} bytes)`,
      );
    }
  }
  const text = decodeUtf8(headerLength === undefined ? body : body.subarray(0, headerLength));
  const json = parseJson(text);
  if (!isObject(json)) throw invalidArg(`request body must be a JSON object, got ${kind(json)}`);

  if (json.id !== undefined && typeof json.id !== "string") {
    throw invalidArg(`request id must be a string, got ${kind(json.id)}`);
  }
  const parameters = json.parameters === undefined ? {} : readParameters(json.parameters, "request");
  const binaryOutput = parameters.binary_data_output;
  if (binaryOutput !== undefined && typeof binaryOutput !== "boolean") {
    throw invalidArg(`request parameter binary_data_output must be a boolean, got ${JSON.stringify(binaryOutput)}`);
  }

  const rawInputs = json.inputs;
  if (!Array.isArray(rawInputs) || rawInputs.length === 0) {
    throw invalidArg(`request inputs must be a non-empty array, got ${kind(rawInputs)}`);
  }
  const inputs: InferInput[] = [];
  const names = new Set<string>();
  const binaryNames: string[] = [];
  let offset = headerLength ?? body.byteLength;
  let lossless: { inputs: { data: unknown }[] } | undefined;
  for (let i = 0; i < rawInputs.length; i++) {
    const raw: unknown = rawInputs[i];
    if (!isObject(raw)) throw invalidArg(`inputs[${i}] must be an object, got ${kind(raw)}`);
    const { name, datatype } = raw;
    if (typeof name !== "string" || name === "") {
      throw invalidArg(`inputs[${i}].name must be a non-empty string, got ${kind(name)}`);
    }
    if (names.has(name)) throw invalidArg(`input '${name}' appears more than once in the request`);
    names.add(name);
    if (!isDataType(datatype)) throw invalidArg(`input '${name}': unknown datatype ${kind(datatype)}`);
    const shape = readShape(raw.shape, name);
    const { binary_data_size: size, ...params } =
      raw.parameters === undefined ? {} : readParameters(raw.parameters, `input '${name}'`);
    const target = { name, datatype, shape };

    let data: TensorData;
    if (size !== undefined) {
      if (raw.data !== undefined) throw invalidArg(`input '${name}': has both data and binary_data_size; send one`);
      if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0) {
        throw invalidArg(
          `input '${name}': binary_data_size must be a non-negative integer, got ${JSON.stringify(size)}`,
        );
      }
      if (headerLength === undefined) {
        throw invalidArg(
          `input '${name}': binary_data_size is set but the request has no binary part (no Inference-Header-Content-Length)`,
        );
      }
      if (size > body.byteLength - offset) {
        throw invalidArg(
          `input '${name}': binary data size mismatch: binary_data_size ${size} runs past the end of the body (${body.byteLength - offset} bytes left)`,
        );
      }
      data = decodeBinaryTensor(body.subarray(offset, offset + size), target);
      offset += size;
      binaryNames.push(name);
    } else {
      let values = raw.data;
      if (values === undefined) throw invalidArg(`input '${name}': has neither data nor binary_data_size`);
      if (needsLosslessJson(datatype, values)) {
        // Slow path: JSON.parse rounded a 64-bit integer; re-read the same text keeping exact digits.
        lossless ??= parseJsonLossless(text) as { inputs: { data: unknown }[] };
        values = lossless.inputs[i]!.data;
      }
      data = decodeJsonData(target, values);
    }
    const input: InferInput = { name, tensor: { datatype, shape, data } };
    if (Object.keys(params).length > 0) input.parameters = params;
    inputs.push(input);
  }
  if (offset !== body.byteLength) {
    const declared = offset - (headerLength ?? 0);
    const present = body.byteLength - (headerLength ?? 0);
    const who =
      binaryNames.length === 0
        ? "no input declares binary_data_size"
        : `binary_data_size of ${quoteAll(binaryNames)} adds up to ${declared} bytes`;
    throw invalidArg(`binary data size mismatch: ${who}, but ${present} bytes follow the JSON header`);
  }

  const request: InferRequest = { parameters, inputs };
  if (json.id !== undefined) request.id = json.id;
  const outputs = readOutputs(json.outputs, binaryOutput === true);
  if (outputs !== undefined) request.outputs = outputs;
  return request;
}

/**
 * Decodes a raw binary request (`Inference-Header-Content-Length: 0`): the whole body is the data
 * of the model's single input. Non-BYTES: the one -1 dimension, if any, is inferred from the body
 * size. BYTES: the body is one element, without a length prefix, so the shape must hold one
 * element. Every output is then returned binary (`parameters.binary_data_output: true`).
 */
export function decodeRawBinaryRequest(body: Uint8Array, input: RawInputSignature): InferRequest {
  const { name, datatype } = input;
  const given = `[${input.shape.join(",")}]`;
  const variable = input.shape.filter((d) => d < 0).length;
  let shape: number[];
  let data: TensorData;
  if (datatype === "BYTES") {
    shape = input.shape.map((d) => (d < 0 ? 1 : d));
    if (elementCount(shape) !== 1) {
      throw invalidArg(
        `raw binary request: input '${name}' is BYTES with shape ${given}; a raw body carries exactly one element`,
      );
    }
    data = [body];
  } else {
    if (variable > 1) {
      throw invalidArg(
        `raw binary request: input '${name}' has shape ${given} with more than one variable dimension; send a JSON header`,
      );
    }
    shape = [...input.shape];
    if (variable === 1) {
      const rowBytes = elementCount(input.shape.filter((d) => d >= 0)) * byteSize(datatype);
      if (rowBytes === 0 || body.byteLength % rowBytes !== 0) {
        throw invalidArg(
          `raw binary request: input '${name}': ${body.byteLength} bytes do not fill ${datatype} shape ${given}`,
        );
      }
      shape[shape.findIndex((d) => d < 0)] = body.byteLength / rowBytes;
    }
    data = decodeBinaryTensor(body, { name, datatype, shape });
  }
  return { parameters: { binary_data_output: true }, inputs: [{ name, tensor: { datatype, shape, data } }] };
}

function readOutputs(raw: unknown, binaryDefault: boolean): RequestedOutput[] | undefined {
  if (raw === undefined) return undefined;
  if (!Array.isArray(raw)) throw invalidArg(`request outputs must be an array, got ${kind(raw)}`);
  if (raw.length === 0) return undefined;
  const names = new Set<string>();
  return raw.map((entry: unknown, i) => {
    if (!isObject(entry)) throw invalidArg(`outputs[${i}] must be an object, got ${kind(entry)}`);
    const { name } = entry;
    if (typeof name !== "string" || name === "") {
      throw invalidArg(`outputs[${i}].name must be a non-empty string, got ${kind(name)}`);
    }
    if (names.has(name)) throw invalidArg(`output '${name}' is requested more than once`);
    names.add(name);
    const { binary_data: binary, ...params } =
      entry.parameters === undefined ? {} : readParameters(entry.parameters, `output '${name}'`);
    if (binary !== undefined && typeof binary !== "boolean") {
      throw invalidArg(`output '${name}': binary_data must be a boolean, got ${JSON.stringify(binary)}`);
    }
    const out: RequestedOutput = { name, binary: binary ?? binaryDefault };
    if (Object.keys(params).length > 0) out.parameters = params;
    return out;
  });
}

function readParameters(raw: unknown, where: string): Parameters {
  if (!isObject(raw)) throw invalidArg(`${where} parameters must be an object, got ${kind(raw)}`);
  for (const key of Object.keys(raw)) {
    const v = raw[key];
    if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean") {
      throw invalidArg(`${where} parameter '${key}' must be a string, number or boolean, got ${kind(v)}`);
    }
  }
  return raw as Parameters;
}

function readShape(raw: unknown, name: string): number[] {
  if (!Array.isArray(raw)) throw invalidArg(`input '${name}': shape must be an array, got ${kind(raw)}`);
  for (let i = 0; i < raw.length; i++) {
    const d: unknown = raw[i];
    if (typeof d !== "number" || !Number.isSafeInteger(d) || d < 0) {
      const shown = raw.map((x) => JSON.stringify(x)).join(",");
      throw invalidArg(
        `input '${name}': shape [${shown}] has invalid dimension ${JSON.stringify(d)} at index ${i}; dimensions are non-negative integers`,
      );
    }
  }
  return raw as number[];
}

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return utf8Strict.decode(bytes);
  } catch {
    throw invalidArg("malformed JSON in request body: not valid UTF-8");
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw invalidArg(`malformed JSON in request body: ${(e as Error).message}`);
  }
}

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function kind(v: unknown): string {
  if (v === undefined) return "nothing";
  if (v === null) return "null";
  if (Array.isArray(v)) return v.length === 0 ? "an empty array" : "an array";
  if (typeof v === "object") return "an object";
  const s = JSON.stringify(v);
  return s.length > 60 ? `${s.slice(0, 60)}…` : s;
}

function quoteAll(names: string[]): string {
  return names.map((n) => `'${n}'`).join(", ");
}
