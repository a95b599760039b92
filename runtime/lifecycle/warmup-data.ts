import { RuntimeError } from "../core/mod.ts";
import type { Tensor } from "../core/mod.ts";
import type { WarmupSample } from "../config/mod.ts";
import { allocate, byteSize, fromConfigType } from "../tensor/mod.ts";

type SampleInput = WarmupSample["inputs"][string];

/**
 * One warm-up input as a tensor of `shape` (the sample's dims, after the batch when the function
 * batches): zeros, random values, the bytes of its `input_data_file` (`files`, read from the
 * function's warmup/ folder by the loader) or its inline `data` — one sample's worth, repeated for
 * each row of the batch, as Triton does.
 */
export function warmupTensor(sampleName: string, name: string, input: SampleInput, shape: number[], files: ReadonlyMap<string, Uint8Array> | undefined): Tensor {
  const datatype = fromConfigType(input.data_type);
  const count = shape.reduce((a, b) => a * b, 1);
  const perSample = input.dims.reduce((a, b) => a * b, 1);
  const fail = (problem: string) => new RuntimeError("INVALID_ARG", `model_warmup '${sampleName}' input '${name}': ${problem}`);
  if (input.input_data_file !== undefined) {
    const bytes = files?.get(input.input_data_file);
    if (!bytes) throw fail(`input_data_file '${input.input_data_file}' was not found in the function's warmup/ folder`);
    return repeat(datatype, shape, count, perSample, fromBytes(datatype, bytes, perSample, fail));
  }
  if (input.data !== undefined) return repeat(datatype, shape, count, perSample, fromValues(datatype, input.data, fail));
  return sampleTensor(datatype, shape, input.random_data === true);
}

/** One sample's elements, from a file's raw little-endian bytes (BYTES: each element after its 4-byte length). */
function fromBytes(datatype: Tensor["datatype"], bytes: Uint8Array, elements: number, fail: (problem: string) => Error): Tensor["data"] {
  if (datatype === "BYTES") {
    const out: Uint8Array[] = [];
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let at = 0;
    while (at < bytes.length && out.length < elements) {
      if (at + 4 > bytes.length) break;
      const length = view.getUint32(at, true);
      if (at + 4 + length > bytes.length) throw fail(`its element ${out.length} says ${length} bytes where ${bytes.length - at - 4} remain`);
      out.push(bytes.slice(at + 4, at + 4 + length));
      at += 4 + length;
    }
    if (out.length !== elements || at !== bytes.length) throw fail(`input_data_file holds ${out.length} length-prefixed elements${at !== bytes.length ? " and more bytes" : ""} where dims need ${elements}`);
    return out;
  }
  const expected = elements * byteSize(datatype);
  if (bytes.length !== expected) throw fail(`input_data_file holds ${bytes.length} bytes where dims need ${expected} (${elements} × ${byteSize(datatype)}, raw little-endian)`);
  const data = allocate(datatype, elements) as Exclude<Tensor["data"], Uint8Array[]>;
  new Uint8Array(data.buffer, data.byteOffset, data.byteLength).set(bytes);
  return data;
}

/** One sample's elements from inline values (the schema checked their count). */
function fromValues(datatype: Tensor["datatype"], values: readonly (number | string | boolean)[], fail: (problem: string) => Error): Tensor["data"] {
  if (datatype === "BYTES") return values.map((v) => new TextEncoder().encode(String(v)));
  if (datatype === "FP16" || datatype === "BF16") throw fail(`inline data is not supported for ${datatype}; use input_data_file`);
  const data = allocate(datatype, values.length) as Exclude<Tensor["data"], Uint8Array[]>;
  values.forEach((v, i) => {
    const n = Number(v);
    if (!Number.isFinite(n)) throw fail(`data[${i}] (${JSON.stringify(v)}) is not a number`);
    if (data instanceof BigInt64Array || data instanceof BigUint64Array) {
      if (!Number.isInteger(n)) throw fail(`data[${i}] (${n}) is not an integer`);
      data[i] = BigInt(n);
    } else {
      data[i] = n;
    }
  });
  return data;
}

/** `count` elements made of `perSample`-element copies of `one`. */
function repeat(datatype: Tensor["datatype"], shape: number[], count: number, perSample: number, one: Tensor["data"]): Tensor {
  if (count === perSample) return { datatype, shape, data: one } as Tensor;
  if (Array.isArray(one)) return { datatype, shape, data: Array.from({ length: count }, (_, i) => one[i % perSample]!.slice()) };
  const data = allocate(datatype, count) as typeof one;
  for (let at = 0; at < count; at += perSample) (data as Float32Array).set(one as Float32Array, at);
  return { datatype, shape, data } as Tensor;
}

/** Zeros, or random values valid for the datatype (BYTES: "0", as Triton falls back to zeros). */
function sampleTensor(datatype: Tensor["datatype"], shape: number[], random: boolean): Tensor {
  const count = shape.reduce((a, b) => a * b, 1);
  if (datatype === "BYTES") return { datatype, shape, data: Array.from({ length: count }, () => new TextEncoder().encode("0")) };
  const data = allocate(datatype, count);
  if (random && !Array.isArray(data)) {
    for (let i = 0; i < count; i++) {
      const value = Math.random();
      if (data instanceof Float32Array || data instanceof Float64Array) data[i] = value * 2 - 1;
      else if (data instanceof BigInt64Array || data instanceof BigUint64Array) data[i] = BigInt(Math.floor(value * 100));
      else if (datatype === "BOOL") data[i] = value < 0.5 ? 0 : 1;
      else if (datatype !== "FP16" && datatype !== "BF16") data[i] = Math.floor(value * 100);
    }
  }
  return { datatype, shape, data };
}
