import type { ModelSignature, Tensor } from "../core/mod.ts";
import type { OrtSessionSettings } from "./_ort-session.ts";

/** Messages from the main thread to an ORT worker; `id` pairs each with its reply. */
export type WorkerRequest =
  | { id: number; op: "load"; model: Uint8Array; settings: OrtSessionSettings; package: "node" | "web" }
  | { id: number; op: "run"; feeds: Record<string, Tensor>; outputs?: readonly string[] }
  | { id: number; op: "time"; feeds: Record<string, Tensor>; runs: number }
  | { id: number; op: "release" };

/**
 * The one message without a reply: hands the worker the shared-memory channel's control block and
 * arenas (`_shared-channel.ts`), and again whenever the input arena grows (absent fields keep theirs).
 */
export type WorkerNotice = { op: "channel"; control?: SharedArrayBuffer; input?: SharedArrayBuffer; output?: SharedArrayBuffer; spinMicros?: number };

/**
 * Buffers that can move to the other thread instead of being copied: numeric tensors that own
 * their whole buffer (a batch buffer, an ORT output). Views into a larger buffer, such as a
 * request body, are copied, so the rest of that buffer stays usable.
 */
export function transferables(tensors: Record<string, Tensor>): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  for (const { data } of Object.values(tensors)) {
    if (Array.isArray(data) || !(data.buffer instanceof ArrayBuffer)) continue;
    // A detached buffer (byteLength 0) cannot move again; an empty one gains nothing by moving.
    if (data.byteLength > 0 && data.byteOffset === 0 && data.byteLength === data.buffer.byteLength) buffers.add(data.buffer);
  }
  return [...buffers];
}

/**
 * `tensors` as they should be posted: a numeric view into a larger buffer (a request body, slab
 * memory from `smallBytes`) is copied, since structured clone would copy its whole buffer along
 * with it; the copy owns its buffer, so it moves by transfer.
 */
export function postable(tensors: Record<string, Tensor>): Record<string, Tensor> {
  let own: Record<string, Tensor> | undefined;
  for (const name in tensors) {
    const { datatype, shape, data } = tensors[name]!;
    if (Array.isArray(data) || !(data.buffer instanceof ArrayBuffer) || data.byteLength === data.buffer.byteLength) continue;
    own ??= { ...tensors };
    own[name] = { datatype, shape, data: data.slice() } as Tensor;
  }
  return own ?? tensors;
}

/**
 * Replies; `invalid` marks an error that the request's content caused (INVALID_ARG). A channel run
 * whose outputs did not fit the output arena answers here, with the larger arena it grew in `output`.
 */
export type WorkerReply =
  | { id: number; ok: true; signature?: ModelSignature; outputs?: Record<string, Tensor>; output?: SharedArrayBuffer; us?: number }
  | { id: number; ok: false; error: string; invalid?: boolean };
