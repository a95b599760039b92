import type { DataType, Tensor } from "../core/mod.ts";
import { batchParts, byteSize, DATA_TYPES, storageFor } from "../tensor/mod.ts";

/**
 * The shared-memory hop to an ORT worker: a control block (an Int32Array over a
 * SharedArrayBuffer) and two arenas, one per direction. The main thread writes a batch's feeds into
 * the input arena and bumps `EPOCH`; the worker, blocked in `Atomics.wait` on `EPOCH`, runs them,
 * writes the outputs into the output arena and flips `STATE` to DONE; the main thread wakes on
 * `Atomics.waitAsync(STATE)`. No structured clone, no transfer, no per-batch buffer on either side
 * (the main thread copies outputs out once, so the arena is free for the next batch while the HTTP
 * layer still encodes the last one). Anything the arenas cannot carry (BYTES, tensors past the
 * arena ceiling) goes over postMessage, which stays the general path.
 */

/** Word indexes of the control block. */
export const STATE = 0;
/** Bumped by the main thread after each submit or message, so a waiting worker never misses one. */
export const EPOCH = 1;
/** How many messages the main thread has posted; the worker leaves its wait loop to read new ones. */
export const POSTED = 2;
/** How a DONE run answers: OK (outputs in the arena) or BY_MESSAGE (a postMessage reply follows or came). */
export const STATUS = 3;
/** The request id of the submitted run, for a reply that goes by message. */
export const RUN_ID = 4;
const COUNT = 5;
/** Which outputs the submitted run fetches: bit i for output i of the signature; 0 = all of them. */
export const FETCH = 6;
/** Outputs a FETCH mask can name (bits 0..30 of an int32); a run that needs a later one goes by message. */
export const FETCH_BITS = 31;
const HEADER = 8;

// Values of `STATE`. Only the main thread moves READY → SUBMITTED and DONE → READY; only the
// worker moves SUBMITTED → DONE. The worker waits on EPOCH, never on STATE, so no wake is lost.
/** No run in flight. */
export const READY = 0;
/** Feeds are in the input arena; the worker is running them or about to. */
export const SUBMITTED = 1;
/** The worker finished; `STATUS` says where the answer is. */
export const DONE = 2;

export const STATUS_OK = 0;
export const STATUS_BY_MESSAGE = 1;

export const CONTROL_BYTES = 16 * 1024;
export const INITIAL_ARENA_BYTES = 64 * 1024;
/**
 * Largest arena either side grows to. Past it, tensors move by transfer: a multi-megabyte batch
 * costs milliseconds to compute, so the hop no longer matters, and arenas stay resident per worker.
 */
export const MAX_ARENA_BYTES = 16 * 1024 * 1024;

const ALIGN = 8;
const MAX_DIM = 0x7fffffff;
const HEADER_WORDS = CONTROL_BYTES / 4 - HEADER;

type WaitAsync = (typed: Int32Array, index: number, value: number) => { async: false; value: string } | { async: true; value: Promise<string> };

/** `Atomics.waitAsync` (ES2024; Node ≥ 16, Bun and Deno have it), absent where the runtime lacks it. */
export const waitAsync: WaitAsync | undefined = (Atomics as unknown as { waitAsync?: WaitAsync }).waitAsync?.bind(Atomics);

/** True where this runtime can share memory between threads and wait on it from both sides. */
export function sharedChannelSupported(): boolean {
  return typeof SharedArrayBuffer === "function" && waitAsync !== undefined;
}

/**
 * Bytes the arena needs for `tensors` in the order of `names`, or -1 when the channel cannot carry
 * them (BYTES, a name outside the model's signature, a dimension past int32, too many for the header).
 */
export function arenaBytesFor(names: readonly string[], tensors: Record<string, Tensor>): number {
  let bytes = 0;
  let words = 0;
  for (const name in tensors) {
    const tensor = tensors[name]!;
    if (tensor.datatype === "BYTES" || names.indexOf(name) < 0) return -1;
    for (const d of tensor.shape) if (d > MAX_DIM) return -1;
    words += 5 + tensor.shape.length;
    bytes += align(byteLengthOf(tensor));
  }
  return words > HEADER_WORDS ? -1 : bytes;
}

/** Writes `tensors` into the arena and their descriptions into the control block (sizes checked first). */
export function writeTensors(control: Int32Array, arena: Uint8Array, names: readonly string[], tensors: Record<string, Tensor>): void {
  let word = HEADER;
  let offset = 0;
  let count = 0;
  for (const name in tensors) {
    const tensor = tensors[name]!;
    const { datatype, shape } = tensor;
    const byteLength = byteLengthOf(tensor);
    control[word++] = names.indexOf(name);
    control[word++] = DATA_TYPES.indexOf(datatype);
    control[word++] = shape.length;
    control[word++] = offset;
    control[word++] = byteLength;
    for (const d of shape) control[word++] = d;
    // A batch's parts go in one after another: the batch is never assembled on this side.
    let at = offset;
    for (const part of batchParts(tensor) ?? [tensor.data as Numeric]) {
      arena.set(new Uint8Array(part.buffer, part.byteOffset, part.byteLength), at);
      at += part.byteLength;
    }
    offset += align(byteLength);
    count++;
  }
  control[COUNT] = count;
}

/**
 * The tensors the control block describes, by name. `copy` gives each its own buffer (the main
 * thread's outputs, which outlive the next batch); otherwise they are views over the arena (the
 * worker's feeds, dead once the run returns).
 */
export function readTensors(control: Int32Array, arena: ArrayBuffer | SharedArrayBuffer, names: readonly string[], copy: boolean): Record<string, Tensor> {
  const tensors: Record<string, Tensor> = {};
  let word = HEADER;
  for (let i = control[COUNT]!; i > 0; i--) {
    const name = names[control[word++]!]!;
    const datatype = DATA_TYPES[control[word++]!] as DataType;
    const rank = control[word++]!;
    const offset = control[word++]!;
    const byteLength = control[word++]!;
    const shape = Array.from(control.subarray(word, word + rank));
    word += rank;
    const Storage = storageFor(datatype)!;
    const view = new Storage(arena as ArrayBuffer, offset, byteLength / byteSize(datatype));
    tensors[name] = { datatype, shape, data: copy ? view.slice() : view };
  }
  return tensors;
}

/**
 * The FETCH word for `wanted` among `names`: 0 (all) when `wanted` is undefined; -1 when one of them
 * is past FETCH_BITS (or unknown), which the channel cannot say.
 */
export function fetchMask(names: readonly string[], wanted: readonly string[] | undefined): number {
  if (!wanted) return 0;
  let mask = 0;
  for (const name of wanted) {
    const i = names.indexOf(name);
    if (i < 0 || i >= FETCH_BITS) return -1;
    mask |= 1 << i;
  }
  return mask;
}

/** The output names a FETCH word selects (undefined: all). */
export function fetchedNames(names: readonly string[], mask: number): string[] | undefined {
  if (mask === 0) return undefined;
  return names.filter((_, i) => i < FETCH_BITS && (mask & (1 << i)) !== 0);
}

type Numeric = Exclude<Tensor["data"], Uint8Array[]>;

/** A numeric tensor's bytes, from its batch parts when it has them (reading `data` would assemble them). */
function byteLengthOf(tensor: Tensor): number {
  const parts = batchParts(tensor);
  if (!parts) return (tensor.data as Numeric).byteLength;
  let bytes = 0;
  for (const part of parts) bytes += part.byteLength;
  return bytes;
}

/** The smallest power-of-two arena of at least `bytes`, never under the initial size. */
export function arenaSizeFor(bytes: number): number {
  let size = INITIAL_ARENA_BYTES;
  while (size < bytes) size *= 2;
  return size;
}

function align(n: number): number {
  return (n + ALIGN - 1) & ~(ALIGN - 1);
}
