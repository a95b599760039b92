/** Wire datatypes of the KServe v2 protocol (config enums are `TYPE_<name>`, with BYTES ↔ TYPE_STRING). */
export type DataType =
  | "BOOL"
  | "UINT8"
  | "UINT16"
  | "UINT32"
  | "UINT64"
  | "INT8"
  | "INT16"
  | "INT32"
  | "INT64"
  | "FP16"
  | "FP32"
  | "FP64"
  | "BF16"
  | "BYTES";

/**
 * Element storage per datatype. Numeric types use the matching TypedArray (INT64/UINT64 as BigInt
 * arrays so values beyond 2^53 stay exact; BOOL as one byte 0/1; FP16/BF16 as raw 16-bit words).
 * BYTES keeps every element as raw bytes so the codecs are byte-exact (NUL and non-UTF-8 included).
 */
export type TensorData =
  | Uint8Array
  | Int8Array
  | Uint16Array
  | Int16Array
  | Uint32Array
  | Int32Array
  | BigUint64Array
  | BigInt64Array
  | Float32Array
  | Float64Array
  | Uint8Array[];

/** A dense, row-major tensor. `shape` includes the batch dimension when the model batches. */
export interface Tensor {
  readonly datatype: DataType;
  readonly shape: readonly number[];
  readonly data: TensorData;
}

/** Number of elements for a shape (1 for a scalar). */
export function elementCount(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** `dims` with its variable dimension (-1; at most one) filled so that they hold `count` elements. */
export function fillVariableDim(dims: readonly number[], count: number): number[] {
  const known = dims.reduce((n, d) => (d === -1 ? n : n * d), 1);
  return dims.map((d) => (d === -1 ? count / known : d));
}
