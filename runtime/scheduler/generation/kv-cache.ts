/**
 * The KV cache's data, in blocks (per layer, keys and values: [blocks, kv heads, block size, head
 * dim]), and the step's dense tensors made from it. onnxruntime's only paged-attention kernel is
 * CUDA-only, so a decoder in Hugging Face Optimum's layout takes its past as dense
 * `past_key_values.{i}.key/value` [batch, heads, past, head dim]: each step gathers every row's
 * blocks into them (rows shorter than the longest padded, masked by `attention_mask`) and
 * scatters the new positions of `present.{i}.*` back into the rows' blocks.
 */
import type { Tensor } from "../../core/mod.ts";

/** What the cache needs to know of the decoder (read from its signature when the config completes). */
export interface KvGeometry {
  layers: number;
  kvHeads: number;
  headDim: number;
  /** Whether the model takes `position_ids` (most Optimum decoder exports do). */
  positionIds: boolean;
  /** The token a padded position carries (any id works: it is masked). */
  padToken: number;
}

/** One row of a step: a sequence's next `tokens` tokens, from position `from`. */
export interface StepRow {
  table: readonly number[];
  /** Every token the sequence has (the ones this step computes included). */
  ids: ArrayLike<number>;
  from: number;
  tokens: number;
}

export class KvStore {
  readonly geometry: KvGeometry;
  readonly blockSize: number;
  readonly blocks: number;
  /** Per layer: keys, values. */
  readonly #data: [Float32Array, Float32Array][];

  constructor(geometry: KvGeometry, blocks: number, blockSize: number) {
    this.geometry = geometry;
    this.blocks = blocks;
    this.blockSize = blockSize;
    const perLayer = blocks * geometry.kvHeads * blockSize * geometry.headDim;
    this.#data = Array.from({ length: geometry.layers }, () => [new Float32Array(perLayer), new Float32Array(perLayer)]);
  }

  /** Bytes one block holds across layers (keys and values). */
  static blockBytes(geometry: KvGeometry, blockSize: number): number {
    return geometry.layers * 2 * geometry.kvHeads * blockSize * geometry.headDim * 4;
  }

  /**
   * The model's feeds for `rows`: ids, mask and positions [rows, longest step], and the past
   * [rows, heads, longest past, head dim] gathered from the blocks.
   */
  feeds(rows: readonly StepRow[]): Record<string, Tensor> {
    const { kvHeads, headDim, layers } = this.geometry;
    const B = rows.length;
    const past = Math.max(...rows.map((r) => r.from));
    const seq = Math.max(...rows.map((r) => r.tokens));
    const total = past + seq;
    const ids = new BigInt64Array(B * seq).fill(BigInt(this.geometry.padToken));
    const mask = new BigInt64Array(B * total);
    const positions = new BigInt64Array(B * seq);
    rows.forEach((row, r) => {
      for (let j = 0; j < row.from; j++) mask[r * total + j] = 1n;
      for (let i = 0; i < row.tokens; i++) {
        ids[r * seq + i] = BigInt(row.ids[row.from + i]!);
        mask[r * total + past + i] = 1n;
      }
      for (let i = 0; i < seq; i++) positions[r * seq + i] = BigInt(row.from + Math.min(i, row.tokens - 1));
    });
    const feeds: Record<string, Tensor> = {
      input_ids: { datatype: "INT64", shape: [B, seq], data: ids },
      attention_mask: { datatype: "INT64", shape: [B, total], data: mask },
    };
    if (this.geometry.positionIds) feeds.position_ids = { datatype: "INT64", shape: [B, seq], data: positions };
    const span = this.blockSize * headDim;
    for (let l = 0; l < layers; l++) {
      (["key", "value"] as const).forEach((part, p) => {
        const source = this.#data[l]![p]!;
        const dense = new Float32Array(B * kvHeads * past * headDim);
        rows.forEach((row, r) => {
          for (let h = 0; h < kvHeads; h++) {
            const base = (r * kvHeads + h) * past * headDim;
            for (let b = 0; b * this.blockSize < row.from; b++) {
              const count = Math.min(this.blockSize, row.from - b * this.blockSize) * headDim;
              const at = (row.table[b]! * kvHeads + h) * span;
              dense.set(source.subarray(at, at + count), base + b * span);
            }
          }
        });
        feeds[`past_key_values.${l}.${part}`] = { datatype: "FP32", shape: [B, kvHeads, past, headDim], data: dense };
      });
    }
    return feeds;
  }

  /** Writes each row's new positions of `present.{i}.*` ([rows, heads, past + seq, head dim]) into its blocks. */
  scatter(outputs: Record<string, Tensor>, rows: readonly StepRow[]): void {
    const { kvHeads, headDim, layers } = this.geometry;
    const past = Math.max(...rows.map((r) => r.from));
    const span = this.blockSize * headDim;
    for (let l = 0; l < layers; l++) {
      (["key", "value"] as const).forEach((part, p) => {
        const present = outputs[`present.${l}.${part}`];
        if (!present) throw new Error(`the decoder returned no 'present.${l}.${part}'`);
        const total = present.shape[2]!;
        const data = present.data as Float32Array;
        const target = this.#data[l]![p]!;
        rows.forEach((row, r) => {
          for (let h = 0; h < kvHeads; h++) {
            const base = ((r * kvHeads + h) * total + past) * headDim;
            for (let i = 0; i < row.tokens; i++) {
              const position = row.from + i;
              const at = (row.table[Math.floor(position / this.blockSize)]! * kvHeads + h) * span + (position % this.blockSize) * headDim;
              target.set(data.subarray(base + i * headDim, base + (i + 1) * headDim), at);
            }
          }
        });
      });
    }
  }
}
