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

/** Where `batchOf` keeps a batch's parts (a symbol: a tensor's own keys stay datatype, shape, data). */
const PARTS = Symbol("batch parts");

type NumericData = Exclude<TensorData, Uint8Array[]>;

/**
 * The requests' tensors as one batch along dimension 0, without copying them yet: its `data` is
 * concatenated on first read (as `concatBatch` would), and `batchParts` hands the parts to code
 * that copies them anyway — the worker channel writes each straight into shared memory, so a
 * batch bound for a worker is copied once, not twice, and allocates nothing.
 */
export function batchOf(parts: readonly Tensor[]): Tensor {
  const first = parts[0]!;
  if (parts.length === 1 || first.datatype === "BYTES") return concatBatch(parts);
  return new BatchTensor(parts);
}

/**
 * A batch of parts, joined when `data` is first read. A class, not an object literal with
 * `get data()`: V8 (Node 20) allocates a literal that has an accessor in the old generation, so
 * the request buffers its getter reached survived every young-generation collection and waited
 * for a full one (see `test/unit/tensor/young-garbage.test.ts`). The getter is the prototype's, so
 * a copy of the object (postMessage, a spread) would lose `data`: such code takes `plainTensors`.
 */
class BatchTensor implements Tensor {
  readonly datatype: Tensor["datatype"];
  readonly shape: readonly number[];
  readonly [PARTS]: NumericData[];
  readonly #parts: readonly Tensor[];
  #data: TensorData | undefined;

  constructor(parts: readonly Tensor[]) {
    this.datatype = parts[0]!.datatype;
    this.shape = [parts.reduce((n, t) => n + t.shape[0]!, 0), ...parts[0]!.shape.slice(1)];
    this[PARTS] = parts.map((t) => t.data as NumericData);
    this.#parts = parts;
  }

  get data(): TensorData {
    return (this.#data ??= concatBatch(this.#parts).data);
  }
}

/**
 * `tensors` with each `batchOf` batch as a plain `{ datatype, shape, data }` (its data joined), for
 * code that copies or hands them on (a structured clone, a user's handler); the same object when
 * none is a batch.
 */
export function plainTensors(tensors: Record<string, Tensor>): Record<string, Tensor> {
  let plain: Record<string, Tensor> | undefined;
  for (const name in tensors) {
    const t = tensors[name]!;
    if (!(t instanceof BatchTensor)) continue;
    plain ??= { ...tensors };
    plain[name] = { datatype: t.datatype, shape: t.shape, data: t.data };
  }
  return plain ?? tensors;
}

/** The parts of a batch `batchOf` made, in order (kept after its data was joined); undefined for any other tensor. */
export function batchParts(tensor: Tensor): readonly NumericData[] | undefined {
  return (tensor as { [PARTS]?: NumericData[] })[PARTS];
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
