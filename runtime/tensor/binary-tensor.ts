import { invalidArg } from "../core/errors.ts";
import { type DataType, elementCount, type Tensor, type TensorData } from "../core/tensor.ts";
import { byteSize, storageFor, tensorByteLength } from "./datatypes.ts";
import { smallStorage } from "./small-bytes.ts";

/** Which tensor a binary section belongs to; `name` appears in every error message. */
export interface BinaryTensorTarget {
  name: string;
  datatype: DataType;
  shape: readonly number[];
}

/** TypedArrays use the host's byte order; the wire is little-endian. Every current target is LE. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Decodes one tensor's binary section (Triton binary extension). Fixed-size types: exactly
 * product(shape) × element size bytes, little-endian; the result is a zero-copy view of `bytes`
 * when its offset is aligned for the element size, else an aligned copy. BOOL bytes must be 0 or 1.
 * BYTES: repeated [uint32 LE length][bytes], walked to the exact end, with exactly product(shape)
 * elements; elements are views into `bytes` (zero-length ones all share one empty view).
 */
export function decodeBinaryTensor(bytes: Uint8Array, target: BinaryTensorTarget): TensorData {
  const { name, datatype, shape } = target;
  const count = elementCount(shape);
  if (datatype === "BYTES") return decodeBytesElements(bytes, target, count);

  const size = byteSize(datatype);
  const expected = count * size;
  if (bytes.byteLength !== expected) {
    throw invalidArg(
      `input '${name}': expected ${expected} bytes of binary data for ${datatype} shape [${shape.join(",")}], got ${bytes.byteLength}`,
    );
  }
  if (datatype === "BOOL") {
    for (let i = 0; i < count; i++) {
      const b = bytes[i]!;
      if (b > 1) throw invalidArg(`input '${name}': BOOL element ${i} is byte ${b}, expected 0 or 1`);
    }
  }
  const Storage = storageFor(datatype);
  if (Storage === undefined) throw new Error(`no storage for ${datatype}`);
  if (LITTLE_ENDIAN && bytes.byteOffset % size === 0) {
    return new Storage(bytes.buffer as ArrayBuffer, bytes.byteOffset, count);
  }
  const out = smallStorage(Storage, count);
  const raw = new Uint8Array(out.buffer, out.byteOffset, expected);
  raw.set(bytes);
  if (!LITTLE_ENDIAN) swapBytes(raw, size);
  return out;
}

/** Writes a tensor's binary section into `into.buffer` at `into.offset`; returns the bytes written. */
export function writeBinaryTensor(tensor: Tensor, into: { buffer: Uint8Array; offset: number }): number {
  const { data } = tensor;
  const { buffer } = into;
  let at = into.offset;
  if (Array.isArray(data)) {
    const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    for (const el of data) {
      view.setUint32(at, el.byteLength, true);
      buffer.set(el, at + 4);
      at += 4 + el.byteLength;
    }
    return at - into.offset;
  }
  const raw = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  buffer.set(raw, at);
  if (!LITTLE_ENDIAN) swapBytes(buffer.subarray(at, at + raw.byteLength), data.BYTES_PER_ELEMENT);
  return raw.byteLength;
}

/** A tensor's binary section as a new buffer of exactly `tensorByteLength(tensor)` bytes. */
export function encodeBinaryTensor(tensor: Tensor): Uint8Array {
  const out = new Uint8Array(tensorByteLength(tensor));
  writeBinaryTensor(tensor, { buffer: out, offset: 0 });
  return out;
}

/** Shared by every zero-length element: one view object instead of one per element. */
const EMPTY = new Uint8Array(0);

function decodeBytesElements(bytes: Uint8Array, target: BinaryTensorTarget, count: number): Uint8Array[] {
  const { name, shape } = target;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = bytes.byteLength;
  // `count` was checked against the element budget, so the array may be sized up front.
  const out = new Array<Uint8Array>(count);
  let n = 0;
  let at = 0;
  while (at < end) {
    if (n === count) {
      throw invalidArg(
        `input '${name}': BYTES data has ${end - at} bytes left after the ${count} elements of shape [${shape.join(",")}]`,
      );
    }
    if (at + 4 > end) {
      throw invalidArg(
        `input '${name}': BYTES element ${n} has a truncated length prefix (${end - at} of 4 bytes at offset ${at})`,
      );
    }
    const len = view.getUint32(at, true);
    at += 4;
    if (len > end - at) {
      throw invalidArg(
        `input '${name}': BYTES element ${n} has length ${len}, which runs past the end of its data (${end - at} bytes left)`,
      );
    }
    out[n++] = len === 0 ? EMPTY : bytes.subarray(at, at + len);
    at += len;
  }
  if (n !== count) {
    throw invalidArg(
      `input '${name}': expected ${count} BYTES elements for shape [${shape.join(",")}], got ${n}`,
    );
  }
  return out;
}

/** Reverses each `size`-byte group in place (only on big-endian hosts). */
function swapBytes(raw: Uint8Array, size: number): void {
  if (size === 1) return;
  for (let i = 0; i < raw.length; i += size) raw.subarray(i, i + size).reverse();
}
