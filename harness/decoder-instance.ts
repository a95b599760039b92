/**
 * A decoder built by models/decoder.ts as a generation scheduler's instance, straight on
 * onnxruntime-node, every call counted: what the scheduler's tests run on, and the bench's
 * "scheduler alone" (no HTTP).
 */
import * as ort from "onnxruntime-node";
import type { Tensor } from "../runtime/core/mod.ts";
import type { KvGeometry, ModelInstance } from "../runtime/scheduler/mod.ts";
import { DECODER, buildDecoder, decoderReference, specialTokenId } from "../models/decoder.ts";
import type { DecoderSpec } from "../models/decoder.ts";

/** The KV geometry the scheduler needs for a decoder of `spec`. */
export function decoderGeometry(spec: DecoderSpec = DECODER): KvGeometry {
  return { layers: spec.layers, kvHeads: spec.heads, headDim: spec.headDim, positionIds: true, padToken: specialTokenId("<|endoftext|>") };
}

export const DECODER_GEOMETRY = decoderGeometry();

/** One session per spec, shared by every instance made for it. */
const sessions = new Map<DecoderSpec, Promise<ort.InferenceSession>>();

export function decoderInstance(spec: DecoderSpec = DECODER, options: { intraOpNumThreads?: number } = { intraOpNumThreads: 1 }): ModelInstance & { runs: number; rows: number[]; release(): Promise<void> } {
  let session = sessions.get(spec);
  if (!session) sessions.set(spec, (session = ort.InferenceSession.create(buildDecoder(spec), options)));
  const instance = {
    runs: 0,
    rows: [] as number[],
    async run(feeds: Record<string, Tensor>): Promise<Record<string, Tensor>> {
      instance.runs++;
      instance.rows.push(feeds.input_ids!.shape[0]!);
      const ortFeeds: Record<string, ort.Tensor> = {};
      for (const [name, t] of Object.entries(feeds)) ortFeeds[name] = new ort.Tensor(t.datatype === "INT64" ? "int64" : "float32", t.data as Float32Array, t.shape as number[]);
      const out = await (await session!).run(ortFeeds);
      const result: Record<string, Tensor> = {};
      for (const [name, t] of Object.entries(out)) result[name] = { datatype: "FP32", shape: t.dims, data: t.data as Float32Array };
      return result;
    },
    /** Releases the shared session (the next instance for this spec makes a new one). */
    async release(): Promise<void> {
      sessions.delete(spec);
      await (await session!).release();
    },
  };
  return instance;
}

/** Greedy continuation by the float64 reference, recomputing the whole sequence each token. */
export function referenceGreedy(ids: number[], tokens: number): number[] {
  const seq = [...ids];
  for (let i = 0; i < tokens; i++) {
    const logits = decoderReference(seq).at(-1)!;
    let best = 0;
    for (let v = 1; v < logits.length; v++) if (logits[v]! > logits[best]!) best = v;
    seq.push(best);
  }
  return seq.slice(ids.length);
}
