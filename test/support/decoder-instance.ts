/**
 * The example decoder (models/decoder.ts) as a scheduler's instance, straight on onnxruntime-node:
 * what the generation scheduler's tests run on, with every call counted.
 */
import * as ort from "onnxruntime-node";
import type { Tensor } from "../../runtime/core/mod.ts";
import type { ModelInstance } from "../../runtime/scheduler/mod.ts";
import { DECODER, buildDecoder, specialTokenId } from "../../models/decoder.ts";
import type { KvGeometry } from "../../runtime/scheduler/generation/kv-cache.ts";

export const DECODER_GEOMETRY: KvGeometry = { layers: DECODER.layers, kvHeads: DECODER.heads, headDim: DECODER.headDim, positionIds: true, padToken: specialTokenId("<|endoftext|>") };

let session: Promise<ort.InferenceSession> | undefined;

export function decoderInstance(): ModelInstance & { runs: number; rows: number[] } {
  session ??= ort.InferenceSession.create(buildDecoder(), { intraOpNumThreads: 1 });
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
  };
  return instance;
}
