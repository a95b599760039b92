import { Buffer } from "node:buffer";
import { closeSync, existsSync, fstatSync, ftruncateSync, openSync, readSync, unlinkSync, writeSync } from "node:fs";
import process from "node:process";

/**
 * Bytes per direction of a function process's tensor lane. Its pages stay allocated in /dev/shm once
 * written, and a container's /dev/shm is often 64 MB: two directions of 8 MiB per isolated function.
 */
export const LANE_BYTES = 8 << 20;
/** Views smaller than this cross inline: the IPC channel's own copy is as cheap for them. */
export const LANE_MIN_BYTES = 32 << 10;
/** The lane's fd in the child (stdio 0–2, then the IPC channel at 3). */
export const LANE_FD = 4;
/** The environment variable that tells the child it has a lane, and its size. */
export const LANE_ENV = "TENSORFN_TENSOR_LANE_BYTES";
/** The user's switch: `TENSORFN_TENSOR_LANE=off` in the server's environment sends everything over IPC. */
export const LANE_SWITCH = "TENSORFN_TENSOR_LANE";

/** The process's first message when it holds the lane: the server places tensors from then on. */
export const LANE_READY = "tensorfn:tensor-lane-ready";

const HEADER_BYTES = 4096;
/** A placeholder's key: no message of the protocol has a key starting with a NUL. */
const MARK = "\0lane";

type Placed = { [MARK]: number; bytes: number; type: string };

/** What a place may name: the typed arrays, and Node's Buffer (given back as one). */
const VIEWS = {
  Buffer: Uint8Array,
  Uint8Array,
  Uint8ClampedArray,
  Int8Array,
  Uint16Array,
  Int16Array,
  Uint32Array,
  Int32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
} as const;

/**
 * An open file in /dev/shm for a function process's tensor lane, unlinked at once (it lives while
 * the two processes hold it: a server killed outright leaves nothing behind), or undefined where
 * there is no /dev/shm, it cannot be had or LANE_SWITCH is off; everything then crosses the IPC channel.
 */
export function openLaneFile(capacity = LANE_BYTES): number | undefined {
  if (process.platform !== "linux" || !existsSync("/dev/shm") || process.env[LANE_SWITCH] === "off") return undefined;
  const path = `/dev/shm/tensorfn-lane-${process.pid}-${crypto.randomUUID()}`;
  let fd: number | undefined;
  try {
    fd = openSync(path, "wx+", 0o600);
    unlinkSync(path);
    ftruncateSync(fd, HEADER_BYTES + 2 * capacity);
    return fd;
  } catch {
    if (fd !== undefined) closeSync(fd);
    return undefined;
  }
}

/**
 * A function process's tensor lane: large typed arrays of its messages go through a file in
 * /dev/shm (tmpfs: a copy in, a copy out) and only their place through the IPC channel, whose pipe
 * (64 KiB a turn) and serializer cost more: 1.5–1.6× the requests/s for 4 MB each way, within
 * noise for 600 KB (bench/results/isolation.md). Two rings in one file, one per direction, each written by one side and
 * read by the other in message order; a reader says how far it has read in the file's header, so the
 * writer reuses the space. A view that does not fit (larger than a ring, the ring full of unread
 * bytes, /dev/shm out of space) crosses inline, as without a lane: nothing waits for room.
 */
export function tensorLane(fd: number, side: "server" | "process", capacity = LANE_BYTES) {
  // The server writes ring 0 and reads ring 1; the process the other way round.
  const [out, into] = side === "server" ? [0, 1] : [1, 0];
  const ringStart = (ring: number) => HEADER_BYTES + ring * capacity;
  const number = new Float64Array(2);
  const numberBytes = new Uint8Array(number.buffer);
  // How far the reader of `ring` has read: written twice, taken only when both agree (never torn).
  const readMark = (ring: number): number | undefined => {
    readSync(fd, numberBytes, 0, 16, ring * 16);
    return number[0] === number[1] ? number[0] : undefined;
  };
  const writeMark = (ring: number, at: number) => {
    number[0] = number[1] = at;
    writeSync(fd, numberBytes, 0, 16, ring * 16);
  };

  let written = 0; // bytes ever placed into our ring, counting skipped tails
  let consumed = 0; // how far the other side has read it, as last seen

  /** Writes `view` into our ring; its place there, or undefined if it does not fit now. */
  const place = (view: ArrayBufferView): number | undefined => {
    const length = view.byteLength;
    const offset = written % capacity;
    const skip = offset + length > capacity ? capacity - offset : 0; // a view never wraps
    const needed = skip + length;
    if (needed > capacity - (written - consumed)) {
      consumed = readMark(out) ?? consumed;
      if (needed > capacity - (written - consumed)) return undefined;
    }
    const at = written + skip;
    const bytes = new Uint8Array(view.buffer, view.byteOffset, length);
    try {
      for (let done = 0; done < length; ) done += writeSync(fd, bytes, done, length - done, ringStart(out) + (at % capacity) + done);
    } catch {
      return undefined; // ENOSPC: /dev/shm is full; this one goes inline
    }
    written = at + length;
    return at;
  };

  /** A view as it crosses: placed in the ring, or itself (small, not a plain typed array, or no room). */
  const pack = (view: ArrayBufferView): unknown => {
    if (view.byteLength < LANE_MIN_BYTES || !(view.constructor.name in VIEWS)) return view; // a DataView, a Float16Array: inline
    const at = place(view);
    return at === undefined ? view : ({ [MARK]: at, bytes: view.byteLength, type: view.constructor.name } satisfies Placed);
  };

  let readUpTo: number | undefined;
  const take = (placed: Placed): ArrayBufferView => {
    const at = placed[MARK];
    // The other side may be a function gone wrong: a place outside its ring, or a type that is not a typed array, is refused.
    const View = VIEWS[placed.type as keyof typeof VIEWS];
    if (!Number.isSafeInteger(at) || at < 0 || !Number.isSafeInteger(placed.bytes) || placed.bytes < 0 || (at % capacity) + placed.bytes > capacity || !View || placed.bytes % View.BYTES_PER_ELEMENT !== 0) {
      throw new Error(`a malformed tensor-lane place (${String(at)}, ${String(placed.bytes)} bytes, ${String(placed.type)})`);
    }
    const bytes = new Uint8Array(placed.bytes);
    for (let done = 0; done < bytes.length; ) {
      const n = readSync(fd, bytes, done, bytes.length - done, ringStart(into) + (at % capacity) + done);
      if (n === 0) throw new Error("the tensor lane ends early");
      done += n;
    }
    readUpTo = at + placed.bytes;
    return placed.type === "Buffer" ? Buffer.from(bytes.buffer) : new View(bytes.buffer, 0, placed.bytes / View.BYTES_PER_ELEMENT);
  };

  return {
    /** `message` with its large typed arrays written into the lane and replaced by their place. */
    pack: (message: unknown): unknown => replaceIn(message, (value) => (ArrayBuffer.isView(value) ? pack(value) : undefined)),
    /** A received message with its placed arrays read back (copies); the space they held is given back. */
    unpack(message: unknown): unknown {
      readUpTo = undefined;
      const unpacked = replaceIn(message, (value) => (ArrayBuffer.isView(value) ? value : MARK in value ? take(value as Placed) : undefined));
      if (readUpTo !== undefined) writeMark(into, readUpTo);
      return unpacked;
    },
  };
}

export type TensorLane = ReturnType<typeof tensorLane>;

/**
 * `value` with what `visit` replaces in it, through plain objects and arrays up to 8 levels deep
 * (a message's tensors sit at the fourth), copying only the containers on the way to a change: the
 * caller's message is left as it was. `visit` answers an object's replacement (itself to leave it),
 * or undefined to look inside it.
 */
function replaceIn(value: unknown, visit: (value: object) => unknown, depth = 0): unknown {
  if (depth > 8 || value === null || typeof value !== "object") return value;
  const replaced = visit(value);
  if (replaced !== undefined) return replaced;
  const proto = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return value;
  let copy: Record<string, unknown> | undefined;
  for (const key in value) {
    const item = (value as Record<string, unknown>)[key];
    const next = replaceIn(item, visit, depth + 1);
    if (next !== item) (copy ??= Array.isArray(value) ? ([...value] as unknown as Record<string, unknown>) : { ...(value as Record<string, unknown>) })[key] = next;
  }
  return copy ?? value;
}

/** The process's side: its lane, if the server handed it one (LANE_ENV, LANE_FD) and it can be read. */
export function processLane(env: Record<string, string | undefined>): TensorLane | undefined {
  const capacity = Number(env[LANE_ENV]);
  if (!(capacity > 0)) return undefined;
  try {
    fstatSync(LANE_FD);
  } catch {
    return undefined;
  }
  return tensorLane(LANE_FD, "process", capacity);
}
