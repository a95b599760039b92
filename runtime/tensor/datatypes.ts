import type { DataType, Tensor, TensorData } from "../core/tensor.ts";

/** Triton config.pbtxt enum for a datatype (`TYPE_FP32`…; BYTES is `TYPE_STRING`): read off TABLE below. */
export type ConfigDataType = (typeof TABLE)[DataType]["config"];

/** ONNX Runtime JS tensor type strings that have a wire datatype. */
export type OrtType =
  | "bool"
  | "uint8"
  | "uint16"
  | "uint32"
  | "uint64"
  | "int8"
  | "int16"
  | "int32"
  | "int64"
  | "float16"
  | "float32"
  | "float64"
  | "string";

/** Constructor of the TypedArray that stores a fixed-size datatype. */
export type StorageConstructor =
  | Uint8ArrayConstructor
  | Int8ArrayConstructor
  | Uint16ArrayConstructor
  | Int16ArrayConstructor
  | Uint32ArrayConstructor
  | Int32ArrayConstructor
  | BigUint64ArrayConstructor
  | BigInt64ArrayConstructor
  | Float32ArrayConstructor
  | Float64ArrayConstructor;

interface DataTypeInfo {
  /** Bytes per element; 0 for BYTES, whose elements vary. */
  size: number;
  /** Storage for fixed-size types; undefined for BYTES (an array of Uint8Array). */
  storage: StorageConstructor | undefined;
  config: `TYPE_${string}`;
  /** undefined where ONNX Runtime has no such type (BF16). */
  ort: OrtType | undefined;
}

// The one definition of the datatypes: wire name, size, storage, config enum, ONNX Runtime name.
const TABLE = {
  BOOL: { size: 1, storage: Uint8Array, config: "TYPE_BOOL", ort: "bool" },
  UINT8: { size: 1, storage: Uint8Array, config: "TYPE_UINT8", ort: "uint8" },
  UINT16: { size: 2, storage: Uint16Array, config: "TYPE_UINT16", ort: "uint16" },
  UINT32: { size: 4, storage: Uint32Array, config: "TYPE_UINT32", ort: "uint32" },
  UINT64: { size: 8, storage: BigUint64Array, config: "TYPE_UINT64", ort: "uint64" },
  INT8: { size: 1, storage: Int8Array, config: "TYPE_INT8", ort: "int8" },
  INT16: { size: 2, storage: Int16Array, config: "TYPE_INT16", ort: "int16" },
  INT32: { size: 4, storage: Int32Array, config: "TYPE_INT32", ort: "int32" },
  INT64: { size: 8, storage: BigInt64Array, config: "TYPE_INT64", ort: "int64" },
  FP16: { size: 2, storage: Uint16Array, config: "TYPE_FP16", ort: "float16" },
  FP32: { size: 4, storage: Float32Array, config: "TYPE_FP32", ort: "float32" },
  FP64: { size: 8, storage: Float64Array, config: "TYPE_FP64", ort: "float64" },
  BF16: { size: 2, storage: Uint16Array, config: "TYPE_BF16", ort: undefined },
  BYTES: { size: 0, storage: undefined, config: "TYPE_STRING", ort: "string" },
} as const satisfies Readonly<Record<DataType, DataTypeInfo>>;

/** Every wire datatype, in the protocol's table order. */
export const DATA_TYPES: readonly DataType[] = Object.keys(TABLE) as DataType[];

/** Every config enum name (`TYPE_BOOL` … `TYPE_STRING`), in the same order. */
export const CONFIG_DATA_TYPES: readonly ConfigDataType[] = DATA_TYPES.map((dt) => TABLE[dt].config);

const FROM_CONFIG = new Map<string, DataType>(DATA_TYPES.map((dt) => [TABLE[dt].config, dt]));
const FROM_ORT = new Map<string, DataType>(
  DATA_TYPES.filter((dt) => TABLE[dt].ort !== undefined).map((dt) => [TABLE[dt].ort as string, dt]),
);

/** True when `s` is one of the KServe v2 wire datatypes (case-sensitive, as the protocol is). */
export function isDataType(s: unknown): s is DataType {
  return typeof s === "string" && Object.hasOwn(TABLE, s);
}

/** Wire datatype for a config enum (`"TYPE_FP32"` → `"FP32"`), or undefined when unknown. */
export function fromConfigType(s: ConfigDataType): DataType;
export function fromConfigType(s: string): DataType | undefined;
export function fromConfigType(s: string): DataType | undefined {
  return FROM_CONFIG.get(s);
}

/** Config enum for a wire datatype (`"BYTES"` → `"TYPE_STRING"`). */
export function toConfigType(dt: DataType): ConfigDataType {
  return TABLE[dt].config;
}

/** Wire datatype for an ONNX Runtime type string (`"float32"` → `"FP32"`); undefined when unsupported. */
export function fromOrtType(s: string): DataType | undefined {
  return FROM_ORT.get(s);
}

/** ONNX Runtime type string for a wire datatype; undefined for BF16, which ONNX Runtime JS lacks. */
export function toOrtType(dt: DataType): OrtType | undefined {
  return TABLE[dt].ort;
}

/** Bytes per element; 0 for BYTES (variable-size elements), as in Triton's `GetDataTypeByteSize`. */
export function byteSize(dt: DataType): number {
  return TABLE[dt].size;
}

/** The TypedArray constructor that stores `dt`; undefined for BYTES. */
export function storageFor(dt: DataType): StorageConstructor | undefined {
  return TABLE[dt].storage;
}

/** The value range of the integer datatypes that fit a JS number exactly (64-bit ones use bigint). */
export const INTEGER_RANGE: Partial<Record<DataType, readonly [number, number]>> = {
  UINT8: [0, 0xff],
  UINT16: [0, 0xffff],
  UINT32: [0, 0xffffffff],
  INT8: [-0x80, 0x7f],
  INT16: [-0x8000, 0x7fff],
  INT32: [-0x80000000, 0x7fffffff],
};

/** Zero-filled storage for `count` elements of `dt` (BYTES: `count` empty elements). */
export function allocate(dt: DataType, count: number): TensorData {
  const Storage = TABLE[dt].storage;
  if (Storage === undefined) return Array.from({ length: count }, () => new Uint8Array(0));
  return new Storage(count);
}

/** Bytes the tensor occupies on the wire: BYTES counts a 4-byte length prefix per element. */
export function tensorByteLength(tensor: Tensor): number {
  const { data } = tensor;
  if (Array.isArray(data)) {
    let n = 0;
    for (const el of data) n += 4 + el.byteLength;
    return n;
  }
  return data.byteLength;
}
