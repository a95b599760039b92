import { invalidArg } from "../core/errors.ts";
import { shownNumber } from "../core/shown-number.ts";
import { type DataType, elementCount, type Tensor, type TensorData } from "../core/tensor.ts";
import { INTEGER_RANGE, storageFor } from "./datatypes.ts";
import { parseJsonLossless } from "./_lossless-json.ts";
import type { DataSpan } from "./_json-scan.ts";
import { readFlatNumbers } from "./_json-numbers.ts";
import { smallBytes, smallStorage } from "./small-bytes.ts";

/** Which tensor a JSON `data` array belongs to; `name` appears in every error message. */
export interface JsonTensorTarget {
  name: string;
  datatype: DataType;
  shape: readonly number[];
}

const BIG_RANGE: Partial<Record<DataType, [bigint, bigint]>> = {
  UINT64: [0n, 0xffffffffffffffffn],
  INT64: [-0x8000000000000000n, 0x7fffffffffffffffn],
};

const utf8 = new TextEncoder();
const utf8Strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Decodes one input's JSON `data` (flat or nested, row-major) into storage for its datatype.
 * Policy: the element count must equal the product of the shape; nesting is flattened as Triton
 * does, without checking that it mirrors the shape. Integer types take only JSON integers inside
 * the type's range (INT64/UINT64 also take `bigint`, which the request decoder supplies for values
 * beyond 2^53); FP32/FP64 take finite numbers (FP32 also within its range); BOOL takes only
 * true/false; BYTES takes strings, stored as UTF-8. FP16/BF16 are refused, as in Triton.
 */
export function decodeJsonData(target: JsonTensorTarget, data: unknown): TensorData {
  const { name, datatype, shape } = target;
  if (datatype === "FP16" || datatype === "BF16") {
    throw invalidArg(
      `input '${name}': receiving ${datatype} data via JSON is not supported; use the binary tensor extension`,
    );
  }
  if (!Array.isArray(data)) throw invalidArg(`input '${name}': data must be an array, got ${describe(data)}`);
  const flat = data.some(Array.isArray) ? flatten(data) : data;
  const count = elementCount(shape);
  if (flat.length !== count) {
    throw invalidArg(
      `input '${name}': expected ${count} elements for shape [${shape.join(",")}], got ${flat.length}`,
    );
  }
  const bad = (i: number, want: string): never => {
    throw invalidArg(`input '${name}': element ${i} is ${describe(flat[i])}, expected ${want}`);
  };

  if (datatype === "BYTES") {
    for (let i = 0; i < count; i++) if (typeof flat[i] !== "string") bad(i, "a string");
    return encodeStrings(flat as string[]);
  }
  if (datatype === "BOOL") {
    const out = smallBytes(count);
    for (let i = 0; i < count; i++) {
      const v = flat[i];
      if (v === true) out[i] = 1;
      else if (v !== false) bad(i, "true or false");
    }
    return out;
  }
  if (datatype === "FP32" || datatype === "FP64") {
    const out = datatype === "FP32" ? smallStorage(Float32Array, count) : smallStorage(Float64Array, count);
    for (let i = 0; i < count; i++) {
      const v = flat[i];
      if (typeof v !== "number" || !Number.isFinite(v)) bad(i, "a finite number");
      out[i] = v as number;
      if (out[i] === Infinity || out[i] === -Infinity) bad(i, `a number within the ${datatype} range`);
    }
    return out;
  }
  const big = BIG_RANGE[datatype];
  if (big !== undefined) {
    const out = datatype === "INT64" ? new BigInt64Array(count) : new BigUint64Array(count);
    const want = `an integer in [${big[0]}, ${big[1]}]`;
    for (let i = 0; i < count; i++) {
      const v = flat[i];
      let b: bigint;
      if (typeof v === "bigint") b = v;
      else if (typeof v === "number" && Number.isSafeInteger(v)) b = BigInt(v);
      else if (typeof v === "number" && Number.isInteger(v)) {
        throw invalidArg(
          `input '${name}': element ${i} is ${v}, beyond 2^53 and not read exactly; write ${datatype} values as plain integer literals`,
        );
      } else return bad(i, want);
      if (b < big[0] || b > big[1]) bad(i, want);
      out[i] = b;
    }
    return out;
  }
  const range = INTEGER_RANGE[datatype];
  const Storage = storageFor(datatype);
  if (range === undefined || Storage === undefined) throw new Error(`no JSON decoding for ${datatype}`);
  const out = smallStorage(Storage, count) as Exclude<TensorData, Uint8Array[] | BigInt64Array | BigUint64Array>;
  const [min, max] = range;
  for (let i = 0; i < count; i++) {
    const v = flat[i];
    if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) {
      bad(i, `an integer in [${min}, ${max}]`);
    }
    out[i] = v as number;
  }
  return out;
}

/**
 * Decodes the `data` of one input from its span in the request text (see `scanJsonHeader`).
 * The element count is checked from the scan before anything is parsed. A flat numeric array is
 * then read straight into its typed array (`readFlatNumbers`); anything else is parsed by
 * `JSON.parse`, and re-read digit-exact when an INT64/UINT64 value may have been rounded.
 */
export function decodeJsonSpan(text: string, span: DataSpan, target: JsonTensorTarget): TensorData {
  const { name, datatype, shape } = target;
  if (datatype === "FP16" || datatype === "BF16") return decodeJsonData(target, undefined); // refused, unparsed
  const count = elementCount(shape);
  if (span.leaves >= 0 && span.leaves !== count) {
    throw invalidArg(`input '${name}': expected ${count} elements for shape [${shape.join(",")}], got ${span.leaves}`);
  }
  if (span.arrays === 0 && datatype !== "BYTES" && datatype !== "BOOL") {
    const fast = readFlatNumbers(text, span.start, span.end, datatype, count);
    if (fast) return fast;
  }
  // Anything but a flat array of valid numbers: parsed, and reported, by the reference path.
  const source = text.slice(span.start, span.end);
  let values: unknown;
  try {
    values = JSON.parse(source);
  } catch (e) {
    throw invalidArg(`malformed JSON in request body: input '${name}' data: ${(e as Error).message}`);
  }
  if (needsLosslessJson(datatype, values)) values = parseJsonLossless(source);
  return decodeJsonData(target, values);
}

/**
 * True when an INT64/UINT64 `data` array holds a number that JSON.parse may have rounded (an
 * integer of magnitude ≥ 2^53); the request decoder then re-reads the text losslessly.
 */
export function needsLosslessJson(datatype: DataType, data: unknown): boolean {
  if ((datatype !== "INT64" && datatype !== "UINT64") || !Array.isArray(data)) return false;
  const flat = data.some(Array.isArray) ? flatten(data) : data;
  for (const v of flat) {
    if (typeof v === "number" && Number.isInteger(v) && !Number.isSafeInteger(v)) return true;
  }
  return false;
}

/**
 * JSON text of a tensor's elements as one flat array, ready to splice into a response.
 * INT64/UINT64 are written digit-exact (no JSON.stringify, which cannot take a bigint); FP32/FP64
 * NaN and ±Infinity, which JSON cannot carry, become null; BYTES become strings decoded as UTF-8
 * (elements that are not valid UTF-8 are refused: the client must ask for binary). FP16/BF16 are
 * refused with a hint to request them with `binary_data: true`.
 */
export function encodeJsonData(tensor: Tensor, options: { name: string }): string {
  const { datatype, data } = tensor;
  const { name } = options;
  if (datatype === "FP16" || datatype === "BF16") {
    throw invalidArg(
      `output '${name}': ${datatype} cannot be returned as JSON; request it with "binary_data": true`,
    );
  }
  if (Array.isArray(data)) {
    const parts: string[] = new Array(data.length);
    for (let i = 0; i < data.length; i++) {
      let s: string;
      try {
        s = utf8Strict.decode(data[i]);
      } catch {
        throw invalidArg(
          `output '${name}': element ${i} is not valid UTF-8 and cannot be returned as JSON; request it with "binary_data": true`,
        );
      }
      parts[i] = JSON.stringify(s);
    }
    return `[${parts.join(",")}]`;
  }
  if (datatype === "BOOL") {
    const parts: string[] = new Array(data.length);
    for (let i = 0; i < data.length; i++) parts[i] = data[i] ? "true" : "false";
    return `[${parts.join(",")}]`;
  }
  const text = data.join(",");
  if ((datatype === "FP32" || datatype === "FP64") && /[NI]/.test(text)) {
    const parts: string[] = new Array(data.length);
    for (let i = 0; i < data.length; i++) {
      const v = data[i] as number;
      parts[i] = Number.isFinite(v) ? String(v) : "null";
    }
    return `[${parts.join(",")}]`;
  }
  return `[${text}]`;
}

/** Shared by every zero-length BYTES element: an empty view has nothing to alias or mutate. */
const EMPTY = new Uint8Array(0);

/**
 * UTF-8 of each string as views into one arena: one allocation for the bytes instead of one
 * buffer per element, and none for empty strings. Lone surrogates become U+FFFD, as TextEncoder does.
 */
function encodeStrings(strings: readonly string[]): Uint8Array[] {
  const lengths = new Array<number>(strings.length);
  let total = 0;
  for (let i = 0; i < strings.length; i++) total += lengths[i] = utf8Length(strings[i]!);
  const arena = new Uint8Array(total);
  const out = new Array<Uint8Array>(strings.length);
  let at = 0;
  for (let i = 0; i < strings.length; i++) {
    const len = lengths[i]!;
    if (len === 0) {
      out[i] = EMPTY;
      continue;
    }
    const view = arena.subarray(at, at + len);
    utf8.encodeInto(strings[i]!, view);
    out[i] = view;
    at += len;
  }
  return out;
}

/** Bytes TextEncoder writes for `s`: surrogate pairs take 4, lone surrogates 3 (U+FFFD). */
function utf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 2; // the pair is 2 code units, 4 bytes
      i++;
    } else n += 2;
  }
  return n;
}

/** Row-major flattening of nested arrays, iterative so deep nesting cannot overflow the stack. */
function flatten(data: unknown[]): unknown[] {
  const out: unknown[] = [];
  const arrays: unknown[][] = [data];
  const indices: number[] = [0];
  while (arrays.length > 0) {
    const top = arrays.length - 1;
    const arr = arrays[top]!;
    const i = indices[top]!;
    if (i === arr.length) {
      arrays.pop();
      indices.pop();
      continue;
    }
    indices[top] = i + 1;
    const v = arr[i];
    if (Array.isArray(v)) {
      arrays.push(v);
      indices.push(0);
    } else {
      out.push(v);
    }
  }
  return out;
}

/** A short, quoted rendering of a JSON value for error messages. */
function describe(v: unknown): string {
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "string") return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (Array.isArray(v)) return "an array";
  if (v === undefined) return "missing";
  if (typeof v === "object" && v !== null) return "an object";
  return typeof v === "number" ? shownNumber(v) : String(v);
}
