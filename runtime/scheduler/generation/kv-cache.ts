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
  /**
   * The dense past of the last step per layer and part, reused by the next while still attached:
   * an event-loop session is done with its feeds once its run resolves, where a worker-backed one
   * takes their buffers (detached here: a fresh one is made).
   */
  readonly #scratch: Float32Array[] = [];
  /**
   * The last decode step's dense past, carried to a next decode step over the same sequences: its
   * `present.*` outputs are that step's past as they are (each row's new position after its
   * padding: `attention_mask` marks the holes), so steady decoding gathers nothing. Any change of
   * rows gathers afresh (compacting the holes). Only outputs in memory of their own are carried
   * (a worker-backed session's may be views of an arena its next run reuses).
   */
  #carried?: { keys: readonly number[]; next: readonly number[]; mask: BigInt64Array; total: number; presents: Record<string, Tensor> };
  /** Steps that took their past from the step before as it was, rebuilt it from it (rows joined or left), or gathered it. */
  readonly stats = { carried: 0, rebuilt: 0, gathered: 0 };

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
  feeds(rows: readonly StepRow[], keys?: readonly number[]): Record<string, Tensor> {
    const feeds = this.#feeds(rows, keys);
    // A run that takes its feeds' buffers (a worker's) leaves the mask detached: a decode step keeps a copy to carry.
    if (keys && this.#runTakesFeeds) this.#maskCopy = (feeds.attention_mask!.data as BigInt64Array).slice();
    return feeds;
  }

  /** Whether a run took a step's feeds (their buffers detached after it): carrying then needs the mask copied before the run. */
  #runTakesFeeds = false;
  #maskCopy?: BigInt64Array;

  #feeds(rows: readonly StepRow[], keys?: readonly number[]): Record<string, Tensor> {
    const carried = keys && this.#carry(rows, keys);
    if (carried) return carried;
    // A prompt chunk's step drops the carried past too: kept beside arrivals every iteration, its
    // holes grew its length and every decode step's attention with it (served continuous batching
    // fell from ~850 to ~435 tokens/s in bench:generation); a fresh gather compacts them.
    this.#carried = undefined;
    this.stats.gathered++;
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
    for (let l = 0; l < layers; l++) {
      (["key", "value"] as const).forEach((part, p) => {
        const source = this.#data[l]![p]!;
        const dense = this.#dense(l * 2 + p, B * kvHeads * past * headDim);
        rows.forEach((row, r) => this.#gatherRow(dense, source, row, r, past));
        feeds[`past_key_values.${l}.${part}`] = { datatype: "FP32", shape: [B, kvHeads, past, headDim], data: dense };
      });
    }
    return feeds;
  }

  /** Drops the carried past (a sequence was preempted: its blocks may be reused before the rows change). */
  forget(): void {
    this.#carried = undefined;
  }

  /**
   * A decode step's feeds built on the last decode step's: its past is that step's `present.*` as
   * they are when the rows are the same (no copy), else a new past of the same length where each
   * row that goes on is one contiguous copy of its slice (five times faster here than gathering
   * its blocks) and each row new to decoding is gathered from its blocks, its padding masked; rows
   * that ended are left out. Undefined — gather everything — when no row goes on, a new row's past
   * does not fit, or the carried length has outgrown the rows (holes left by ended ones: a fresh
   * gather compacts them).
   */
  #carry(rows: readonly StepRow[], keys: readonly number[]): Record<string, Tensor> | undefined {
    const c = this.#carried;
    if (!c || rows.some((r) => r.tokens !== 1)) return undefined;
    const T = c.total;
    const oldIndex = new Map(c.keys.map((k, i) => [k, i]));
    const from = keys.map((k, r) => {
      const i = oldIndex.get(k);
      return i !== undefined && rows[r]!.from === c.next[i] ? i : -1;
    });
    const longest = Math.max(...rows.map((r) => r.from));
    if (from.every((i) => i < 0) || rows.some((r, i) => from[i]! < 0 && r.from > T) || (T > longest + 64 && T > 1.5 * longest)) return undefined;
    const same = from.length === c.keys.length && from.every((i, r) => i === r);
    if (same) this.stats.carried++;
    else this.stats.rebuilt++;
    const { kvHeads, headDim, layers } = this.geometry;
    const B = rows.length;
    const total = T + 1;
    const mask = new BigInt64Array(B * total);
    const ids = new BigInt64Array(B);
    const positions = new BigInt64Array(B);
    rows.forEach((row, r) => {
      const i = from[r]!;
      if (i >= 0) mask.set(c.mask.subarray(i * T, (i + 1) * T), r * total);
      else for (let j = 0; j < row.from; j++) mask[r * total + j] = 1n;
      mask[r * total + T] = 1n;
      ids[r] = BigInt(row.ids[row.from]!);
      positions[r] = BigInt(row.from);
    });
    const feeds: Record<string, Tensor> = {
      input_ids: { datatype: "INT64", shape: [B, 1], data: ids },
      attention_mask: { datatype: "INT64", shape: [B, total], data: mask },
    };
    if (this.geometry.positionIds) feeds.position_ids = { datatype: "INT64", shape: [B, 1], data: positions };
    const slice = kvHeads * T * headDim;
    for (let l = 0; l < layers; l++) {
      (["key", "value"] as const).forEach((part, p) => {
        const name = `past_key_values.${l}.${part}`;
        const present = c.presents[`present.${l}.${part}`]!;
        if (same) return void (feeds[name] = present);
        const old = present.data as Float32Array;
        const dense = this.#dense(l * 2 + p, B * slice);
        const source = this.#data[l]![p]!;
        rows.forEach((row, r) => {
          const i = from[r]!;
          if (i >= 0) dense.set(old.subarray(i * slice, (i + 1) * slice), r * slice);
          else this.#gatherRow(dense, source, row, r, T);
        });
        feeds[name] = { datatype: "FP32", shape: [B, kvHeads, T, headDim], data: dense };
      });
    }
    return feeds;
  }

  /** After a decode step over `keys`: what a next step over the same rows carries (see `#carried`). */
  #keep(feeds: Record<string, Tensor>, outputs: Record<string, Tensor>, rows: readonly StepRow[], keys: readonly number[]): void {
    const presents: Record<string, Tensor> = {};
    for (let l = 0; l < this.geometry.layers; l++) {
      for (const part of ["key", "value"]) {
        const t = outputs[`present.${l}.${part}`]!;
        if (typeof SharedArrayBuffer !== "undefined" && (t.data as Float32Array).buffer instanceof SharedArrayBuffer) return void (this.#carried = undefined);
        presents[`present.${l}.${part}`] = t;
      }
    }
    const mask = feeds.attention_mask!;
    let kept = mask.data as BigInt64Array;
    if (kept.buffer.byteLength === 0) {
      // Detached by the run: carry from the copy taken before it, or, the first time, learn to take one.
      this.#runTakesFeeds = true;
      if (this.#maskCopy?.length !== mask.shape[0]! * mask.shape[1]!) return void (this.#carried = undefined);
      kept = this.#maskCopy;
    }
    this.#maskCopy = undefined;
    this.#carried = { keys: [...keys], next: rows.map((r) => r.from + 1), mask: kept, total: mask.shape[1]!, presents };
  }

  /** Copies row `r`'s first `row.from` positions from its blocks in `source` into `dense` [rows, heads, `length`, head dim]. */
  #gatherRow(dense: Float32Array, source: Float32Array, row: StepRow, r: number, length: number): void {
    const { kvHeads, headDim } = this.geometry;
    const span = this.blockSize * headDim;
    for (let h = 0; h < kvHeads; h++) {
      const base = (r * kvHeads + h) * length * headDim;
      for (let b = 0; b * this.blockSize < row.from; b++) {
        const count = Math.min(this.blockSize, row.from - b * this.blockSize) * headDim;
        const at = (row.table[b]! * kvHeads + h) * span;
        dense.set(source.subarray(at, at + count), base + b * span);
      }
    }
  }

  /** A scratch array of `length` floats for slot `slot`, its old contents left (every position read is written or masked). */
  #dense(slot: number, length: number): Float32Array {
    let buffer = this.#scratch[slot];
    if (!buffer || buffer.buffer.byteLength === 0 || buffer.length < length) {
      buffer = new Float32Array(Math.max(length, Math.ceil((buffer?.length ?? 0) * 1.5)));
      this.#scratch[slot] = buffer;
    }
    return buffer.subarray(0, length);
  }

  /**
   * Writes each row's new positions of `present.{i}.*` ([rows, heads, past + seq, head dim]) into
   * its blocks; a decode step given its rows' `keys` is kept for the next to carry.
   */
  scatter(outputs: Record<string, Tensor>, rows: readonly StepRow[], feeds: Record<string, Tensor>, keys?: readonly number[]): void {
    const { kvHeads, headDim, layers } = this.geometry;
    // The new positions follow the past the step was given (carried: longer than any row's).
    const past = feeds.attention_mask!.shape[1]! - feeds.input_ids!.shape[1]!;
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
    if (keys && rows.every((r) => r.tokens === 1)) this.#keep(feeds, outputs, rows, keys);
  }
}
