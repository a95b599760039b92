import type { Tensor, TensorData } from "../core/mod.ts";
import { elementCount } from "../core/mod.ts";

/**
 * Concatenates tensors along dimension 0 into one freshly allocated buffer: each request's data is
 * copied exactly once. All parts must share datatype and non-batch dimensions (the batcher only
 * groups requests whose shapes agree).
 */
export function concatBatch(parts: readonly Tensor[]): Tensor {
  const first = parts[0]!;
  if (parts.length === 1) return first;
  const batch = parts.reduce((n, t) => n + t.shape[0]!, 0);
  const shape = [batch, ...first.shape.slice(1)];
  if (first.datatype === "BYTES") {
    return { datatype: "BYTES", shape, data: parts.flatMap((t) => t.data as Uint8Array[]) };
  }
  const ctor = (first.data as Exclude<TensorData, Uint8Array[]>).constructor as new (n: number) => Exclude<TensorData, Uint8Array[]>;
  const out = new ctor(elementCount(shape));
  let offset = 0;
  for (const t of parts) {
    const src = t.data as Exclude<TensorData, Uint8Array[]>;
    (out as Float32Array).set(src as Float32Array, offset);
    offset += src.length;
  }
  return { datatype: first.datatype, shape, data: out };
}

/**
 * Splits a batched output back into per-request tensors of the given batch sizes. Numeric data
 * comes back as views on the batch buffer, not copies.
 */
export function splitBatch(tensor: Tensor, sizes: readonly number[]): Tensor[] {
  if (sizes.length === 1) return [tensor];
  const rowElements = elementCount(tensor.shape.slice(1));
  const rest = tensor.shape.slice(1);
  const parts: Tensor[] = [];
  let row = 0;
  for (const size of sizes) {
    const start = row * rowElements;
    const end = (row + size) * rowElements;
    const data = Array.isArray(tensor.data) ? tensor.data.slice(start, end) : tensor.data.subarray(start, end);
    parts.push({ datatype: tensor.datatype, shape: [size, ...rest], data });
    row += size;
  }
  return parts;
}
