import { invalidArg, RuntimeError } from "../core/errors.ts";
import { shownJson } from "../core/shown-number.ts";
import type { InferInput, InferRequest, Parameters, RequestedOutput } from "../core/inference.ts";
import { type DataType, elementCount, type TensorData } from "../core/tensor.ts";
import { type DataSpan, HeaderTooLargeError, type ScannedHeader, scanJsonHeader } from "./_json-scan.ts";
import { decodeBinaryTensor } from "./binary-tensor.ts";
import { byteSize, isDataType } from "./datatypes.ts";
import { sharedOutput, sharedRef, withoutSharedKeys } from "./shared-ref.ts";
import type { SharedMemoryReader, SharedRef } from "./shared-ref.ts";
import { checkElementBudget, DEFAULT_MAX_ELEMENTS, OBJECT_ELEMENT_WEIGHT } from "./element-budget.ts";
import { decodeJsonData, decodeJsonSpan, needsLosslessJson } from "./json-tensor.ts";
import { parseJsonLossless } from "./_lossless-json.ts";

type Json = Record<string, unknown>;

const utf8Strict = new TextDecoder("utf-8", { fatal: true });

/** One input as the header declares it, before its data is decoded. */
export interface InputHeader {
  name: string;
  datatype: DataType;
  shape: readonly number[];
}

/** What a request asks for, known before any tensor data is decoded (for the model's checks). */
export interface RequestHeader {
  inputs: readonly InputHeader[];
  outputs?: readonly RequestedOutput[];
  parameters: Parameters;
}

/** The element budget a request's data is decoded within. */
export interface ElementLimit {
  /** `--max-elements` (see `checkElementBudget`); default `DEFAULT_MAX_ELEMENTS`. */
  maxElements?: number;
  /** What set `maxElements`, for the refusal (default `--max-elements`). */
  limitName?: string;
}

export interface ReadOptions {
  /** The `Inference-Header-Content-Length` value; undefined: the body is JSON only. */
  headerLength?: number;
  /** Reads inputs a request places in registered shared memory; absent: such inputs are refused. */
  sharedMemory?: SharedMemoryReader;
}

export type DecodeOptions = ReadOptions & ElementLimit;

/**
 * A request read as far as what it declares, its tensor data not yet decoded: its protocol's codec
 * answers it, the caller checks `header` against the model, and only then calls `decode`.
 */
export interface ReadRequest {
  readonly header: RequestHeader;
  /** The request with its data, once its element counts are within `limit`. */
  decode(limit?: ElementLimit): InferRequest;
}

/**
 * Headers up to this many characters are parsed whole by `JSON.parse`, which is faster than
 * scanning: at 2 characters per value they cannot build more than 32 Ki values, a few MiB at
 * worst. Longer ones are scanned first (`scanJsonHeader`), so their data is parsed only once checked.
 */
export const PARSE_WHOLE_UP_TO = 64 * 1024;

/**
 * One input between reading its header and decoding its data: exactly one of `binary` (its
 * section), `shared` (its place in shared memory), `span` (its JSON text, scanned) or `value`
 * (parsed). One shape for all, kept monomorphic.
 */
interface Planned extends InputHeader {
  params: Parameters;
  index: number;
  binary: Uint8Array | undefined;
  shared: SharedRef | undefined;
  span: DataSpan | undefined;
  value: unknown;
}

/**
 * Reads a KServe v2 inference request body as far as what it declares. `headerLength` undefined:
 * the body is JSON only. `headerLength` > 0 (the `Inference-Header-Content-Length` value): the body
 * is that many bytes of JSON followed by the binary sections of the inputs that carry
 * `parameters.binary_data_size`, in the order of `inputs`, which must end exactly at the end of the
 * body. (0 is a raw binary request: use `readRawBinaryRequest`.) Structure is checked by hand, not
 * zod, since this is the hot path.
 *
 * Policy: cheap checks first. The header is scanned without materialising any input's `data`;
 * names, datatypes, shapes and outputs are what `header` holds, for the caller to check against the
 * model; `decode` then checks element counts (`checkElementBudget`) and only then decodes each
 * input's data. So what a request costs in memory is bounded by what the model and `maxElements`
 * allow, not by its body.
 *
 * Output selection: with `outputs`, each `RequestedOutput.binary` is resolved here (per-output
 * `binary_data` wins over `binary_data_output`). Without `outputs` (or with an empty array), `outputs`
 * is undefined and `binary_data_output` stays in `request.parameters`, where the response encoder
 * reads it. Transport keys (`binary_data_size`, `binary_data`) are dropped from tensor parameters.
 */
export function readInferRequest(body: Uint8Array, options: ReadOptions = {}): ReadRequest {
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
  const { json, spans } = text.length <= PARSE_WHOLE_UP_TO ? { json: parseJson(text), spans: undefined } : scan(text);
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
  const planned: Planned[] = [];
  const names = new Set<string>();
  const binaryNames: string[] = [];
  let offset = headerLength ?? body.byteLength;
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
    const { binary_data_size: size, ...given } =
      raw.parameters === undefined ? {} : readParameters(raw.parameters, `input '${name}'`);
    const shared = sharedRef(given, `input '${name}'`);
    const params = shared ? withoutSharedKeys(given) : given;
    const p: Planned = { name, datatype, shape, params, index: i, binary: undefined, shared, span: undefined, value: undefined };

    if (shared) {
      if (raw.data !== undefined || size !== undefined) {
        throw invalidArg(`input '${name}': set only one of data, binary_data_size and shared_memory_region`);
      }
      if (!options.sharedMemory) throw invalidArg(`input '${name}': this server has no shared memory regions`);
      planned.push(p);
    } else if (size !== undefined) {
      if (raw.data !== undefined) throw invalidArg(`input '${name}': has both data and binary_data_size; send one`);
      if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0) {
        throw invalidArg(
          `input '${name}': binary_data_size must be a non-negative integer, got ${shownJson(size)}`,
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
      p.binary = body.subarray(offset, offset + size);
      planned.push(p);
      offset += size;
      binaryNames.push(name);
    } else {
      const span = spans?.[i];
      if (raw.data === undefined || (spans && span === undefined)) {
        throw invalidArg(`input '${name}': has neither data nor binary_data_size`);
      }
      if (span) p.span = span;
      else p.value = raw.data;
      planned.push(p);
    }
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
  const outputs = readOutputs(json.outputs, binaryOutput === true);

  return new JsonRequestRead(text, planned, { inputs: planned, outputs, parameters }, json.id as string | undefined, options.sharedMemory);
}

/** `readInferRequest` and `decode` at once, for callers with no model to check the header against. */
export function decodeInferRequest(body: Uint8Array, options: DecodeOptions = {}): InferRequest {
  return readInferRequest(body, options).decode(options);
}

/** A JSON (or JSON + binary) request read: its text and planned inputs, decoded on `decode`. */
class JsonRequestRead implements ReadRequest {
  readonly text: string;
  readonly planned: Planned[];
  readonly header: RequestHeader & { outputs: RequestedOutput[] | undefined };
  readonly id: string | undefined;
  readonly sharedMemory: SharedMemoryReader | undefined;

  constructor(text: string, planned: Planned[], header: JsonRequestRead["header"], id: string | undefined, sharedMemory: SharedMemoryReader | undefined) {
    this.text = text;
    this.planned = planned;
    this.header = header;
    this.id = id;
    this.sharedMemory = sharedMemory;
  }

  decode(limit: ElementLimit = {}): InferRequest {
    return decodePlanned(this, limit);
  }
}

function decodePlanned({ text, planned, header, id, sharedMemory }: JsonRequestRead, limit: ElementLimit): InferRequest {
  const { outputs, parameters } = header;
  const maxElements = limit.maxElements ?? DEFAULT_MAX_ELEMENTS;
  // Parsed data cannot weigh more than 8 per character of text: count it only when that could matter.
  const countParsed = text.length * OBJECT_ELEMENT_WEIGHT > maxElements;
  checkElementBudget(
    planned.map((p) => {
      const declared = elementCount(p.shape);
      if (p.binary || p.shared || (!p.span && !countParsed)) return { name: p.name, datatype: p.datatype, elements: declared };
      const { leaves, arrays } = p.span ?? countLeaves(p.value);
      return { name: p.name, datatype: p.datatype, elements: Math.max(declared, leaves), arrays };
    }),
    maxElements,
    limit.limitName,
  );

  let lossless: { inputs: { data: unknown }[] } | undefined;
  const inputs: InferInput[] = planned.map((p) => {
    const target = { name: p.name, datatype: p.datatype, shape: p.shape };
    let data: TensorData;
    if (p.binary) data = decodeBinaryTensor(p.binary, target);
    else if (p.shared) data = decodeBinaryTensor(readShared(p.shared, target, sharedMemory!), target);
    else if (p.span) data = decodeJsonSpan(text, p.span, target);
    else {
      // JSON.parse rounded a 64-bit integer: re-read the same text keeping exact digits.
      let value = p.value;
      if (needsLosslessJson(p.datatype, value)) {
        lossless ??= parseJsonLossless(text) as { inputs: { data: unknown }[] };
        value = lossless.inputs[p.index]!.data;
      }
      data = decodeJsonData(target, value);
    }
    const input: InferInput = { name: p.name, tensor: { datatype: p.datatype, shape: p.shape, data } };
    if (Object.keys(p.params).length > 0) input.parameters = p.params;
    return input;
  });
  const request: InferRequest = { parameters, inputs };
  if (id !== undefined) request.id = id;
  if (outputs !== undefined) request.outputs = outputs;
  return request;
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
    // An output written to shared memory travels in neither form: the answer carries its shape alone.
    const shared = sharedOutput(params, name, binary);
    const out: RequestedOutput = { name, binary: shared ? false : (binary ?? binaryDefault) };
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
      if (typeof d === "number" && Number.isInteger(d) && d > 0) throw invalidArg(`input '${name}': shape dimension ${i} is ${shownJson(d)}; dimensions are non-negative integers`);
      const shown = raw.length > 16 ? `${raw.length} dimensions` : `[${raw.map((x) => shownJson(x)).join(",")}]`;
      throw invalidArg(
        `input '${name}': shape ${shown} has invalid dimension ${shownJson(d)} at index ${i}; dimensions are non-negative integers`,
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

/** Leaves and nested arrays of already-parsed `data`, iteratively (deep nesting cannot overflow). */
function countLeaves(value: unknown): { leaves: number; arrays: number } {
  if (!Array.isArray(value)) return { leaves: -1, arrays: 0 };
  let leaves = 0;
  let arrays = 0;
  const stack: unknown[][] = [value];
  while (stack.length > 0) {
    for (const v of stack.pop()!) {
      if (Array.isArray(v)) {
        arrays++;
        stack.push(v);
      } else leaves++;
    }
  }
  return { leaves, arrays };
}

function scan(text: string): ScannedHeader {
  try {
    return scanJsonHeader(text);
  } catch (e) {
    if (e instanceof HeaderTooLargeError) throw new RuntimeError("RESOURCE_EXHAUSTED", `request header is too large: ${e.message}`);
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
  const s = shownJson(v);
  return s.length > 60 ? `${s.slice(0, 60)}…` : s;
}

function quoteAll(names: string[]): string {
  return names.map((n) => `'${n}'`).join(", ");
}

/**
 * An input's bytes from shared memory, once its byte size is known to fit its shape (a fixed-size
 * datatype's exactly; BYTES' within the reader's bounds), so nothing larger than the tensor is read.
 */
export function readShared(ref: SharedRef, target: { name: string; datatype: DataType; shape: readonly number[] }, reader: SharedMemoryReader): Uint8Array {
  if (target.datatype !== "BYTES") {
    const expected = elementCount(target.shape) * byteSize(target.datatype);
    if (ref.byteSize !== expected) {
      throw invalidArg(`input '${target.name}': shared_memory_byte_size ${ref.byteSize} does not match ${target.datatype} shape [${target.shape.join(",")}] (${expected} bytes)`);
    }
  }
  return reader.read(ref, `input '${target.name}'`);
}
