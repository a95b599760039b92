/**
 * A small BERT-style text encoder with seeded weights, exported as Hugging Face Optimum exports
 * feature-extraction models (with sentence-transformers' pooled output beside it): `input_ids`,
 * `attention_mask` [batch, seq] (INT64) → `last_hidden_state` [batch, seq, hidden] and
 * `sentence_embedding` [batch, hidden] (the mean over the unmasked positions). It shares the example
 * decoder's tokenizer. `encoderReference` is the plain TypeScript forward pass the tests check against.
 */
import { DataType, encodeModel, graph, initializer, node, valueInfo } from "./onnx-graph.ts";
import type { NodeProto, TensorProto } from "./onnx-graph.ts";
import { decoderSideFiles, decoderVocabSize, layerNorm, matVec } from "./decoder.ts";
import { mulberry32, uniform } from "./prng.ts";

export const ENCODER = { heads: 4, headDim: 16, hidden: 64, intermediate: 128, maxPositions: 512 } as const;
const SEED = 0x656e63; // "enc"
const EPSILON = 1e-5;
const MASKED = -3.4028234663852886e38;

interface EncoderWeights {
  wte: Float32Array; wpe: Float32Array; wq: Float32Array; wk: Float32Array; wv: Float32Array; wo: Float32Array;
  w1: Float32Array; w2: Float32Array; ones: Float32Array; zeros: Float32Array;
}

let cached: EncoderWeights | undefined;

function encoderWeights(): EncoderWeights {
  if (cached) return cached;
  const random = mulberry32(SEED);
  const { hidden: H, intermediate: I, maxPositions: P } = ENCODER;
  const dense = (inputs: number, outputs: number) => uniform(random, inputs * outputs, Math.sqrt(3 / inputs));
  cached = {
    wte: uniform(random, decoderVocabSize() * H, 1), wpe: uniform(random, P * H, 0.5),
    wq: dense(H, H), wk: dense(H, H), wv: dense(H, H), wo: dense(H, H), w1: dense(H, I), w2: dense(I, H),
    ones: new Float32Array(H).fill(1), zeros: new Float32Array(H),
  };
  return cached;
}

/**
 * The files an export carries beside the encoder: the decoder's tokenizer, its length set to the
 * encoder's positions, and a config.json saying them (the server refuses longer inputs by it).
 */
export function encoderSideFiles(): Record<string, string> {
  const files = decoderSideFiles();
  const { chat_template: _, ...tokenizerConfig } = { ...JSON.parse(files["tokenizer_config.json"]!), model_max_length: ENCODER.maxPositions };
  const config = { architectures: ["BertModel"], model_type: "tensorfn-encoder", vocab_size: decoderVocabSize(), hidden_size: ENCODER.hidden, num_attention_heads: ENCODER.heads, max_position_embeddings: ENCODER.maxPositions };
  const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  return { "tokenizer.json": files["tokenizer.json"]!, "tokenizer_config.json": json(tokenizerConfig), "config.json": json(config) };
}

export function buildEncoder(): Uint8Array {
  const w = encoderWeights();
  const { hidden: H, heads: NH, headDim: D, intermediate: I, maxPositions: P } = ENCODER;
  const nodes: NodeProto[] = [];
  const n = (op: string, inputs: string[], output: string, attributes = {}) => {
    nodes.push(node(op, inputs, [output], attributes));
    return output;
  };
  const inits: TensorProto[] = [
    initializer("wte", w.wte, [decoderVocabSize(), H]), initializer("wpe", w.wpe, [P, H]),
    initializer("wq", w.wq, [H, H]), initializer("wk", w.wk, [H, H]), initializer("wv", w.wv, [H, H]), initializer("wo", w.wo, [H, H]),
    initializer("w1", w.w1, [H, I]), initializer("w2", w.w2, [I, H]), initializer("ln.weight", w.ones, [H]), initializer("ln.bias", w.zeros, [H]),
    initializer("c.zero", new BigInt64Array([0n]), []), initializer("c.one", new BigInt64Array([1n]), []),
    initializer("c.heads_shape", new BigInt64Array([0n, 0n, BigInt(NH), BigInt(D)]), [4]),
    initializer("c.hidden_shape", new BigInt64Array([0n, 0n, BigInt(H)]), [3]),
    initializer("c.scale", new Float32Array([1 / Math.sqrt(D)]), []), initializer("c.masked", new Float32Array([MASKED]), []),
    initializer("c.axes12", new BigInt64Array([1n, 2n]), [2]), initializer("c.axis1", new BigInt64Array([1n]), [1]), initializer("c.axis2", new BigInt64Array([2n]), [1]),
  ];
  const ln = (x: string, out: string) => n("LayerNormalization", [x, "ln.weight", "ln.bias"], out, { axis: { int: -1 }, epsilon: { float: EPSILON } });
  n("Shape", ["input_ids"], "ids.shape");
  n("Gather", ["ids.shape", "c.one"], "seq", { axis: { int: 0 } });
  n("Range", ["c.zero", "seq", "c.one"], "positions");
  n("Gather", ["wte", "input_ids"], "tok");
  n("Gather", ["wpe", "positions"], "pos");
  n("Add", ["tok", "pos"], "x0");
  const normed = ln("x0", "ln1");
  const heads = (name: string) => {
    n("MatMul", [normed, `w${name}`], `${name}.flat`);
    n("Reshape", [`${name}.flat`, "c.heads_shape"], `${name}.split`);
    return n("Transpose", [`${name}.split`], name, { perm: { ints: [0, 2, 1, 3] } });
  };
  heads("q");
  heads("k");
  heads("v");
  n("Transpose", ["k"], "kT", { perm: { ints: [0, 1, 3, 2] } });
  n("MatMul", ["q", "kT"], "scores.raw");
  n("Mul", ["scores.raw", "c.scale"], "scores");
  n("Cast", ["attention_mask"], "mask.bool", { to: { int: DataType.BOOL } });
  n("Unsqueeze", ["mask.bool", "c.axes12"], "mask.4d");
  n("Where", ["mask.4d", "scores", "c.masked"], "scores.masked");
  n("Softmax", ["scores.masked"], "attn", { axis: { int: -1 } });
  n("MatMul", ["attn", "v"], "ctx");
  n("Transpose", ["ctx"], "ctx.t", { perm: { ints: [0, 2, 1, 3] } });
  n("Reshape", ["ctx.t", "c.hidden_shape"], "ctx.flat");
  n("MatMul", ["ctx.flat", "wo"], "attn.out");
  n("Add", ["x0", "attn.out"], "x1");
  n("MatMul", [ln("x1", "ln2"), "w1"], "up");
  n("Sigmoid", ["up"], "gate");
  n("Mul", ["up", "gate"], "act");
  n("MatMul", ["act", "w2"], "down");
  n("Add", ["x1", "down"], "x2");
  ln("x2", "last_hidden_state");
  // sentence-transformers' mean pooling: the positions the mask keeps, averaged.
  n("Cast", ["attention_mask"], "mask.float", { to: { int: DataType.FLOAT } });
  n("Unsqueeze", ["mask.float", "c.axis2"], "mask.3d");
  n("Mul", ["last_hidden_state", "mask.3d"], "kept");
  n("ReduceSum", ["kept", "c.axis1"], "sum", { keepdims: { int: 0 } });
  n("ReduceSum", ["mask.3d", "c.axis1"], "count", { keepdims: { int: 0 } });
  n("Div", ["sum", "count"], "sentence_embedding");
  const g = graph({
    name: "tensorfn_encoder",
    nodes,
    inputs: [valueInfo("input_ids", DataType.INT64, ["batch_size", "sequence_length"]), valueInfo("attention_mask", DataType.INT64, ["batch_size", "sequence_length"])],
    outputs: [valueInfo("last_hidden_state", DataType.FLOAT, ["batch_size", "sequence_length", H]), valueInfo("sentence_embedding", DataType.FLOAT, ["batch_size", H])],
    initializers: inits,
  });
  return encodeModel(g);
}

/** The mean-pooled embedding of one unpadded sequence, in float64 from the same weights. */
export function encoderReference(ids: readonly number[]): Float64Array {
  const w = encoderWeights();
  const { hidden: H, heads: NH, headDim: D } = ENCODER;
  const x0 = ids.map((id, t) => Float64Array.from({ length: H }, (_, h) => w.wte[id * H + h]! + w.wpe[t * H + h]!));
  const normed = x0.map((x) => layerNorm(x, w.ones, w.zeros));
  const q = normed.map((x) => matVec(x, w.wq, H));
  const k = normed.map((x) => matVec(x, w.wk, H));
  const v = normed.map((x) => matVec(x, w.wv, H));
  const last = x0.map((x, t) => {
    const ctx = new Float64Array(H);
    for (let h = 0; h < NH; h++) {
      const scores = ids.map((_, s) => {
        let dot = 0;
        for (let d = 0; d < D; d++) dot += q[t]![h * D + d]! * k[s]![h * D + d]!;
        return dot / Math.sqrt(D);
      });
      const max = Math.max(...scores);
      const exps = scores.map((s) => Math.exp(s - max));
      const sum = exps.reduce((a, b) => a + b, 0);
      exps.forEach((e, s) => {
        for (let d = 0; d < D; d++) ctx[h * D + d]! += (e / sum) * v[s]![h * D + d]!;
      });
    }
    const attn = matVec(ctx, w.wo, H);
    const x1 = x.map((value, i) => value + attn[i]!);
    const up = matVec(layerNorm(x1, w.ones, w.zeros), w.w1, ENCODER.intermediate).map((u) => u / (1 + Math.exp(-u)));
    const down = matVec(up, w.w2, H);
    return layerNorm(x1.map((value, i) => value + down[i]!), w.ones, w.zeros);
  });
  return Float64Array.from({ length: H }, (_, h) => last.reduce((s, x) => s + x[h]!, 0) / last.length);
}
