import { invalidArg } from "../core/errors.ts";
import { shownJson } from "../core/shown-number.ts";
import type { DataType, Parameters, Tensor } from "../core/mod.ts";
import { elementCount } from "../core/tensor.ts";

/**
 * Triton's classification extension: a requested output with `parameters.classification: N`
 * answers, per batch entry, the N highest values of the model's output as BYTES strings
 * `value:index[:label]`, highest first.
 */

/** Outputs of these datatypes can be classified (Triton's list: the integer and full-precision float types). */
const CLASSIFIABLE: ReadonlySet<DataType> = new Set(["UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32", "INT64", "FP32", "FP64"]);

/** Triton's ceiling on the values one batch entry may classify (pathological memory and CPU otherwise). */
export const MAX_CLASSIFIED_ELEMENTS = 1_000_000;

/**
 * The number of classes `parameters` asks of output `name` (of `datatype`), checked before anything
 * runs: undefined or 0 when it asks for none.
 */
export function classCount(parameters: Parameters | undefined, name: string, datatype: DataType): number | undefined {
  const count = parameters?.classification;
  if (count === undefined) return undefined;
  if (typeof count !== "number" || !Number.isInteger(count) || count < 0 || count > 0xffff_ffff) {
    throw invalidArg(`output '${name}' parameter 'classification' must be a number of classes (an integer ≥ 0), got ${shownJson(count)}`);
  }
  if (count > 0 && !CLASSIFIABLE.has(datatype)) {
    throw invalidArg(`class result not available for output '${name}' due to unsupported type '${datatype}'`);
  }
  return count;
}

/**
 * The top `count` classes of `tensor` as a BYTES tensor: shape [batch, n] when `batched` (the first
 * dimension is the batch), else [n], with n = min(count, values per entry). Ties go to the lower index.
 */
export function classify(tensor: Tensor, count: number, options: { batched: boolean; labels?: readonly string[]; name: string }): Tensor {
  classCount({ classification: count }, options.name, tensor.datatype);
  const batch = options.batched && tensor.shape.length > 0 ? tensor.shape[0]! : 0;
  const total = elementCount(tensor.shape);
  const perEntry = batch > 0 ? total / batch : total;
  if (perEntry > MAX_CLASSIFIED_ELEMENTS) {
    throw invalidArg(`classification of output '${options.name}': ${perEntry} values per batch entry, over the ceiling of ${MAX_CLASSIFIED_ELEMENTS}`);
  }
  const n = Math.min(count, perEntry);
  const values = tensor.data as ArrayLike<number | bigint>;
  const text = formatter(tensor.datatype);
  const encoder = new TextEncoder();
  const out: Uint8Array[] = [];
  for (let entry = 0; entry < Math.max(1, batch); entry++) {
    const start = entry * perEntry;
    for (const index of topIndices(values, start, perEntry, n)) {
      const label = options.labels?.[index];
      out.push(encoder.encode(`${text(values[start + index]!)}:${index}${label ? `:${label}` : ""}`));
    }
  }
  return { datatype: "BYTES", shape: batch > 0 ? [batch, n] : [n], data: out };
}

/**
 * The indices (relative to `start`) of the `n` highest of `length` values, highest first; NaN
 * last. A few classes of many (the common top-5 of 1000) keep a short sorted list instead of sorting all.
 */
function topIndices(values: ArrayLike<number | bigint>, start: number, length: number, n: number): number[] {
  if (n === 0) return [];
  // a before b: higher value first, NaN after every number, ties by index.
  const before = (a: number, b: number) => {
    const x = values[start + a]!;
    const y = values[start + b]!;
    if (x !== x) return false; // NaN
    if (y !== y) return true;
    return x > y || (x === y && a < b);
  };
  if (n * 8 >= length) {
    const all = Array.from({ length }, (_, i) => i);
    return all.sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0)).slice(0, n);
  }
  const top: number[] = [];
  for (let i = 0; i < length; i++) {
    if (top.length === n && !before(i, top[n - 1]!)) continue;
    let at = top.length === n ? n - 1 : top.length;
    while (at > 0 && before(i, top[at - 1]!)) {
      top[at] = top[at - 1]!;
      at--;
    }
    top[at] = i;
  }
  return top;
}

/**
 * A value as Triton writes it (C++'s std::to_string): integers in full, floats with six decimals
 * ("0.250000"), non-finite ones as "nan", "inf", "-inf".
 */
function formatter(datatype: DataType): (v: number | bigint) => string {
  if (datatype !== "FP32" && datatype !== "FP64") return (v) => String(v);
  return (v) => {
    const x = v as number;
    if (x !== x) return "nan";
    if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
    return Object.is(x, -0) ? "-0.000000" : x.toFixed(6);
  };
}
