import type { ModelSignature, Tensor } from "../core/mod.ts";
import type { OrtSessionSettings } from "./_ort-session.ts";

/** Messages from the main thread to an ORT worker; `id` pairs each with its reply. */
export type WorkerRequest =
  | { id: number; op: "load"; model: Uint8Array; settings: OrtSessionSettings }
  | { id: number; op: "run"; feeds: Record<string, Tensor> }
  | { id: number; op: "release" };

/** Replies; `invalid` marks an error that the request's content caused (INVALID_ARG). */
export type WorkerReply =
  | { id: number; ok: true; signature?: ModelSignature; outputs?: Record<string, Tensor> }
  | { id: number; ok: false; error: string; invalid?: boolean };
