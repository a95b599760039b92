/**
 * Small per-request buffers (a request body, a decoded input, an encoded reply) carved out of
 * shared 64 KiB slabs, as Node's `Buffer` pool does for its small buffers. Every `ArrayBuffer`
 * costs a malloc on the event loop and a free on V8's sweeper thread, and on this project's
 * 2-core VMs the two contend for the allocator's lock: ~3 µs per buffer among a request's usual
 * objects (`tsx bench/studies/small-bytes.ts`), several per small request. A view into a slab
 * costs an object.
 *
 * What a caller must know:
 * - A view keeps its whole slab alive: keep a copy (`slice()`), not the view, for long (the
 *   response cache copies what it keeps).
 * - A view never owns its whole buffer, so `transferables` never moves (detaches) a slab; posted
 *   by structured clone it would take the whole slab along, so the worker path copies views first.
 * - Memory is zeroed (a fresh slab is, and no byte is handed out twice), and every view starts on
 *   an 8-byte boundary, so any typed array can view it.
 *
 * State shared by every server in a process, like the malloc heap under it: nothing in it is
 * observable but the memory each view holds.
 */
const SLAB_BYTES = 64 * 1024;
/** Larger requests get a buffer of their own: a slab holds at least 16 of the largest. */
export const SMALL_BYTES_MAX = 4 * 1024;

let slab = new ArrayBuffer(SLAB_BYTES);
let used = 0;

/** Zeroed bytes: a view into the current slab when `length` ≤ SMALL_BYTES_MAX, else a buffer of their own. */
export function smallBytes(length: number): Uint8Array<ArrayBuffer> {
  return smallStorage(Uint8Array, length) as Uint8Array<ArrayBuffer>;
}

/** A typed array's constructor: `new (count)`, or `new (buffer, byteOffset, count)` for a view. */
type Storage = { new (length: number): unknown; new (buffer: ArrayBuffer, byteOffset: number, length: number): unknown; BYTES_PER_ELEMENT: number };

/** Zeroed typed storage for `count` elements of `Storage`, from a slab when small (see `smallBytes`). */
export function smallStorage<S extends Storage>(Storage: S, count: number): InstanceType<S> {
  const bytes = count * Storage.BYTES_PER_ELEMENT;
  if (bytes > SMALL_BYTES_MAX) return new Storage(count) as InstanceType<S>;
  return new Storage(carve(bytes), used - bytes, count) as InstanceType<S>;
}

/** Takes `length` bytes from the slab (a new slab when they do not fit), 8-byte aligned; returns the slab. */
function carve(length: number): ArrayBuffer {
  const start = (used + 7) & ~7;
  if (start + length > SLAB_BYTES) {
    slab = new ArrayBuffer(SLAB_BYTES);
    used = length;
  } else {
    used = start + length;
  }
  return slab;
}
