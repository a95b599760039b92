import { BenchError } from "./bench-error.ts";
import { mulberry32 } from "./load-generator.ts";

/** One tensor of the model metadata (`GET /v2/models/<m>`); `-1` marks a variable dimension. */
export interface TensorMetadata {
  name: string;
  datatype: string;
  shape: number[];
}

/** The model metadata fields the benchmark reads. */
export interface ModelMetadata {
  name: string;
  versions?: string[];
  platform?: string;
  inputs: TensorMetadata[];
  outputs?: TensorMetadata[];
}

/** How to fill in the request. */
export interface RequestBodyOptions {
  /** Whether the first dimension of every input is the batch dimension (max_batch_size > 0). */
  batching: boolean;
  batchSize: number;
  /** `--shape` values by input name, without the batch dimension. */
  shapes?: Record<string, number[]>;
  binary: boolean;
  inputData: "random" | "zero";
  seed?: number;
}

/** A request encoded once and sent unchanged for the whole run. */
export interface EncodedRequest {
  body: Uint8Array;
  headers: Record<string, string>;
  /** The inputs as sent, with their concrete shapes. */
  inputs: TensorMetadata[];
}

const ELEMENT_BYTES: Record<string, number> = {
  BOOL: 1, UINT8: 1, INT8: 1, UINT16: 2, INT16: 2, FP16: 2, BF16: 2,
  UINT32: 4, INT32: 4, FP32: 4, UINT64: 8, INT64: 8, FP64: 8, BYTES: 0,
};

type Values = (number | boolean | string)[];

/**
 * Builds the inference request body for `metadata` once: JSON tensors, or with `binary` the
 * binary tensor extension (JSON header, then each input's raw little-endian bytes in `inputs`
 * order, outputs requested in binary). Random data is seeded, so every run sends the same bytes.
 */
export function buildRequest(metadata: ModelMetadata, options: RequestBodyOptions): EncodedRequest {
  const known = new Set(metadata.inputs.map((input) => input.name));
  for (const name of Object.keys(options.shapes ?? {})) {
    if (!known.has(name)) throw new BenchError(`--shape names '${name}', which is not an input of model '${metadata.name}' (inputs: ${[...known].join(", ")})`);
  }
  const random = mulberry32(options.seed ?? 1);
  const inputs = metadata.inputs.map((input) => {
    const datatype = input.datatype.toUpperCase();
    if (ELEMENT_BYTES[datatype] === undefined) throw new BenchError(`input '${input.name}' has datatype '${input.datatype}', which the benchmark cannot generate`);
    if (!options.binary && (datatype === "FP16" || datatype === "BF16")) {
      throw new BenchError(`input '${input.name}' is ${datatype}, which cannot travel as JSON; add --binary`);
    }
    const shape = resolveShape(input, options);
    const count = shape.reduce((a, b) => a * b, 1);
    const values = generate(datatype, count, options.inputData === "zero" ? () => 0 : random);
    return { name: input.name, datatype, shape, values };
  });
  const sent = inputs.map(({ name, datatype, shape }) => ({ name, datatype, shape }));
  const encoder = new TextEncoder();
  if (!options.binary) {
    const json = { inputs: inputs.map(({ name, shape, datatype, values }) => ({ name, shape, datatype, data: values })) };
    return { body: encoder.encode(JSON.stringify(json)), headers: { "content-type": "application/json" }, inputs: sent };
  }
  const chunks = inputs.map(({ datatype, values }) => encodeBinary(datatype, values));
  const header = encoder.encode(
    JSON.stringify({
      inputs: inputs.map(({ name, shape, datatype }, i) => ({ name, shape, datatype, parameters: { binary_data_size: chunks[i]!.length } })),
      parameters: { binary_data_output: true },
    }),
  );
  const body = new Uint8Array(header.length + chunks.reduce((n, chunk) => n + chunk.length, 0));
  body.set(header, 0);
  let offset = header.length;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.length;
  }
  const headers = { "content-type": "application/octet-stream", "inference-header-content-length": String(header.length) };
  return { body, headers, inputs: sent };
}

/** The concrete shape of `input`: the batch size first when batching, `--shape` for the rest. */
function resolveShape(input: TensorMetadata, options: RequestBodyOptions): number[] {
  if (options.batching && input.shape.length === 0) throw new BenchError(`input '${input.name}' has no batch dimension although the model batches`);
  const dims = options.batching ? input.shape.slice(1) : input.shape;
  const given = options.shapes?.[input.name];
  const shown = `[${input.shape.join(",")}]${options.batching ? ", batch dimension first" : ""}`;
  if (given) {
    if (given.length !== dims.length || dims.some((d, i) => d !== -1 && d !== given[i])) {
      throw new BenchError(`--shape ${input.name}:${given.join(",")} does not fit input '${input.name}' of shape ${shown} (give the dims after the batch dimension)`);
    }
  } else if (dims.includes(-1)) {
    throw new BenchError(`input '${input.name}' has variable dimensions (shape ${shown}); give them with --shape ${input.name}:${dims.map((d) => (d === -1 ? "N" : d)).join(",")}`);
  }
  const resolved = given ?? dims;
  return options.batching ? [options.batchSize, ...resolved] : resolved;
}

/** `count` values valid for `datatype`: small non-negative numbers, booleans, or decimal strings. */
function generate(datatype: string, count: number, random: () => number): Values {
  const values: Values = new Array(count);
  for (let i = 0; i < count; i++) {
    const r = random();
    switch (datatype) {
      case "BOOL": values[i] = r >= 0.5; break;
      case "BYTES": values[i] = String(Math.floor(r * 100)); break;
      case "FP32": values[i] = Math.fround(r); break;
      case "FP64": values[i] = r; break;
      // Half-precision bit patterns: positive values in [2^-5, 1), or zero.
      case "FP16": values[i] = r === 0 ? 0 : (((10 + Math.floor(r * 5)) << 10) | Math.floor(r * 1e6) % 1024); break;
      case "BF16": values[i] = new Uint32Array(Float32Array.of(r).buffer)[0]! >>> 16; break;
      default: values[i] = Math.floor(r * 100);
    }
  }
  return values;
}

/** Little-endian, row-major, no padding; BYTES elements carry a uint32 length prefix. */
function encodeBinary(datatype: string, values: Values): Uint8Array {
  if (datatype === "BYTES") {
    const encoded = values.map((v) => new TextEncoder().encode(String(v)));
    const out = new Uint8Array(encoded.reduce((n, e) => n + 4 + e.length, 0));
    const view = new DataView(out.buffer);
    let offset = 0;
    for (const element of encoded) {
      view.setUint32(offset, element.length, true);
      out.set(element, offset + 4);
      offset += 4 + element.length;
    }
    return out;
  }
  const size = ELEMENT_BYTES[datatype]!;
  const out = new Uint8Array(values.length * size);
  const view = new DataView(out.buffer);
  values.forEach((value, i) => {
    const v = Number(value);
    const at = i * size;
    switch (datatype) {
      case "BOOL": case "UINT8": view.setUint8(at, v); break;
      case "INT8": view.setInt8(at, v); break;
      case "UINT16": case "FP16": case "BF16": view.setUint16(at, v, true); break;
      case "INT16": view.setInt16(at, v, true); break;
      case "UINT32": view.setUint32(at, v, true); break;
      case "INT32": view.setInt32(at, v, true); break;
      case "FP32": view.setFloat32(at, v, true); break;
      case "FP64": view.setFloat64(at, v, true); break;
      case "UINT64": view.setBigUint64(at, BigInt(v), true); break;
      case "INT64": view.setBigInt64(at, BigInt(v), true); break;
    }
  });
  return out;
}
