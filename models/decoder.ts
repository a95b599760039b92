/**
 * A small GPT-style decoder with seeded weights, exported in the layout Hugging Face Optimum
 * writes for decoders with a KV cache, so a user's own export (SmolLM, Qwen, Llama-style) drops in
 * the same way: `input_ids` [batch, seq], `attention_mask` [batch, past + seq], `position_ids`
 * [batch, seq] (INT64), `past_key_values.{i}.key/value` [batch, heads, past, head_dim] → `logits`
 * [batch, seq, vocab], `present.{i}.key/value` [batch, heads, past + seq, head_dim]. Beside it the
 * files such an export carries: tokenizer.json (byte-level BPE trained here on a short text),
 * tokenizer_config.json (with a ChatML chat template), generation_config.json, config.json.
 * `decoderReference` is a plain TypeScript forward pass the tests check ONNX Runtime against.
 */
import { DataType, encodeModel, graph, initializer, node, valueInfo } from "./onnx-graph.ts";
import type { NodeProto, TensorProto } from "./onnx-graph.ts";
import { mulberry32, uniform } from "./prng.ts";

/** A decoder's sizes (hidden = heads × headDim). */
export interface DecoderSpec {
  layers: number;
  heads: number;
  headDim: number;
  hidden: number;
  intermediate: number;
  maxPositions: number;
}

/** The example's (functions/tiny_gpt). */
export const DECODER: DecoderSpec = { layers: 2, heads: 4, headDim: 16, hidden: 64, intermediate: 192, maxPositions: 2048 };
/** A larger one for the generation bench, where a step's compute outweighs the serving around it. */
export const BENCH_DECODER: DecoderSpec = { layers: 2, heads: 8, headDim: 64, hidden: 512, intermediate: 2048, maxPositions: 2048 };
const SEED = 0x677074; // "gpt"
const MERGES = 160;
const SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"] as const;

/** What the BPE is trained on: any English will do; it shapes only which merges exist. */
const CORPUS = `The quick brown fox jumps over the lazy dog. A function is served by the runtime when a
request arrives, and the answer is streamed back token by token. The model reads the prompt, then
writes one token at a time; each new token attends to every token before it through the cache of keys
and values. Hello, world! How are you today? I am fine, thank you. What is the capital of France?
The capital of France is Paris. Once upon a time there was a small model that wanted to talk. It
learned the letters, then the words, then the sentences of the stories it was told.`;

// ---------------------------------------------------------------- tokenizer

/** GPT-2's byte → printable character map, which byte-level BPE vocabularies are written in. */
function bytesToUnicode(): string[] {
  const printable: number[] = [];
  for (let b = 33; b <= 126; b++) printable.push(b);
  for (let b = 161; b <= 172; b++) printable.push(b);
  for (let b = 174; b <= 255; b++) printable.push(b);
  const map: string[] = new Array(256);
  let extra = 0;
  for (let b = 0; b < 256; b++) map[b] = String.fromCodePoint(printable.includes(b) ? b : 256 + extra++);
  return map;
}

/** GPT-2's pre-tokenizer split (contractions, letters, numbers, other, spaces). */
const SPLIT = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

interface TokenizerFiles {
  vocab: Record<string, number>;
  merges: string[];
}

/** Trains `MERGES` byte-pair merges on the corpus: the most frequent adjacent pair first, ties by first seen. */
function trainBpe(): TokenizerFiles {
  const chars = bytesToUnicode();
  const encoder = new TextEncoder();
  const words = new Map<string, { symbols: string[]; count: number }>();
  for (const piece of CORPUS.match(SPLIT) ?? []) {
    const key = [...encoder.encode(piece)].map((b) => chars[b]).join("");
    const word = words.get(key) ?? { symbols: [...key], count: 0 };
    word.count++;
    words.set(key, word);
  }
  const vocab: Record<string, number> = {};
  chars.forEach((c, i) => (vocab[c] = i));
  const merges: string[] = [];
  while (merges.length < MERGES) {
    const pairs = new Map<string, number>();
    for (const { symbols, count } of words.values()) {
      for (let i = 0; i + 1 < symbols.length; i++) {
        const pair = `${symbols[i]} ${symbols[i + 1]}`;
        pairs.set(pair, (pairs.get(pair) ?? 0) + count);
      }
    }
    let best: string | undefined;
    let bestCount = 1;
    for (const [pair, count] of pairs) if (count > bestCount) [best, bestCount] = [pair, count];
    if (!best) break;
    const [a, b] = best.split(" ");
    merges.push(best);
    vocab[a + b] = Object.keys(vocab).length;
    for (const word of words.values()) {
      const next: string[] = [];
      for (let i = 0; i < word.symbols.length; i++) {
        if (word.symbols[i] === a && word.symbols[i + 1] === b) next.push(a + b), i++;
        else next.push(word.symbols[i]);
      }
      word.symbols = next;
    }
  }
  return { vocab, merges };
}

let trained: TokenizerFiles | undefined;
const bpe = () => (trained ??= trainBpe());

/** Vocabulary size: the bytes, the merges and the special tokens. */
export function decoderVocabSize(): number {
  return Object.keys(bpe().vocab).length + SPECIAL.length;
}

/** Token ids of the special tokens, by content. */
export function specialTokenId(content: (typeof SPECIAL)[number]): number {
  return Object.keys(bpe().vocab).length + SPECIAL.indexOf(content);
}

const CHAT_TEMPLATE =
  "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}" +
  "{{ '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}{% endif %}" +
  "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/** The files an Optimum export carries beside model.onnx, by name, as JSON text. */
export function decoderSideFiles(spec: DecoderSpec = DECODER): Record<string, string> {
  const { vocab, merges } = bpe();
  const byteLevel = { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true };
  const tokenizer = {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: SPECIAL.map((content) => ({
      id: specialTokenId(content),
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: null,
    pre_tokenizer: byteLevel,
    post_processor: { ...byteLevel, trim_offsets: false },
    decoder: byteLevel,
    model: {
      type: "BPE",
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges,
    },
  };
  const tokenizerConfig = {
    tokenizer_class: "GPT2Tokenizer",
    bos_token: "<|im_start|>",
    eos_token: "<|im_end|>",
    pad_token: "<|endoftext|>",
    unk_token: "<|endoftext|>",
    add_bos_token: false,
    model_max_length: spec.maxPositions,
    clean_up_tokenization_spaces: false,
    chat_template: CHAT_TEMPLATE,
  };
  const generationConfig = {
    bos_token_id: specialTokenId("<|im_start|>"),
    eos_token_id: [specialTokenId("<|im_end|>"), specialTokenId("<|endoftext|>")],
    pad_token_id: specialTokenId("<|endoftext|>"),
    do_sample: false,
  };
  const config = {
    architectures: ["GPT2LMHeadModel"],
    model_type: "tensorfn-gpt",
    vocab_size: decoderVocabSize(),
    hidden_size: spec.hidden,
    intermediate_size: spec.intermediate,
    num_hidden_layers: spec.layers,
    num_attention_heads: spec.heads,
    num_key_value_heads: spec.heads,
    head_dim: spec.headDim,
    max_position_embeddings: spec.maxPositions,
    use_cache: true,
  };
  const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  return {
    "tokenizer.json": json(tokenizer),
    "tokenizer_config.json": json(tokenizerConfig),
    "generation_config.json": json(generationConfig),
    "config.json": json(config),
  };
}

// ---------------------------------------------------------------- weights and graph

interface LayerWeights {
  ln1: Float32Array; ln1b: Float32Array; wq: Float32Array; wk: Float32Array; wv: Float32Array; wo: Float32Array;
  ln2: Float32Array; ln2b: Float32Array; w1: Float32Array; w2: Float32Array;
}
export interface DecoderWeights {
  wte: Float32Array; wpe: Float32Array; layers: LayerWeights[]; lnf: Float32Array; lnfb: Float32Array; lm: Float32Array; lmBias: Float32Array;
}

/**
 * A bias on the head that keeps the seeded model to printable text: byte tokens outside printable
 * ASCII (lone UTF-8 bytes, control characters) are pushed far down, so what it writes decodes.
 */
function printableBias(): Float32Array {
  const bias = new Float32Array(decoderVocabSize());
  const bytes = bytesToUnicode();
  for (let b = 0; b < 256; b++) if (b > 126 || (b < 32 && b !== 10)) bias[bpe().vocab[bytes[b]!]!] = -20;
  return bias;
}

const weightsCache = new Map<DecoderSpec, DecoderWeights>();

/** The exact weights the model embeds (read-only). The head is scaled so greedy choices have clear margins. */
export function decoderWeights(spec: DecoderSpec = DECODER): DecoderWeights {
  const cached = weightsCache.get(spec);
  if (cached) return cached;
  const random = mulberry32(SEED);
  const { hidden: H, intermediate: I, maxPositions: P } = spec;
  const V = decoderVocabSize();
  const ones = () => new Float32Array(H).fill(1);
  const zeros = () => new Float32Array(H);
  const dense = (inputs: number, outputs: number, gain = 1) => uniform(random, inputs * outputs, gain * Math.sqrt(3 / inputs));
  const wte = uniform(random, V * H, 1);
  const wpe = uniform(random, P * H, 0.5);
  const layers: LayerWeights[] = [];
  for (let l = 0; l < spec.layers; l++) {
    layers.push({
      ln1: ones(), ln1b: zeros(), wq: dense(H, H, 2), wk: dense(H, H, 2), wv: dense(H, H), wo: dense(H, H),
      ln2: ones(), ln2b: zeros(), w1: dense(H, I), w2: dense(I, H),
    });
  }
  const weights = { wte, wpe, layers, lnf: ones(), lnfb: zeros(), lm: dense(H, V, 4), lmBias: printableBias() };
  weightsCache.set(spec, weights);
  return weights;
}

const EPSILON = 1e-5;
/** The masked score: finite (as Hugging Face's exports use the dtype's minimum) so a row with every position masked stays finite. */
const MASKED = -3.4028234663852886e38;

/** Encodes the decoder (opset 17). */
export function buildDecoder(spec: DecoderSpec = DECODER): Uint8Array {
  const w = decoderWeights(spec);
  const { hidden: H, heads: NH, headDim: D, intermediate: I, maxPositions: P } = spec;
  const V = decoderVocabSize();
  const nodes: NodeProto[] = [];
  const inits: TensorProto[] = [
    initializer("wte", w.wte, [V, H]),
    initializer("wpe", w.wpe, [P, H]),
    initializer("lnf.weight", w.lnf, [H]),
    initializer("lnf.bias", w.lnfb, [H]),
    initializer("lm_head", w.lm, [H, V]),
    initializer("lm_head.bias", w.lmBias, [V]),
    initializer("c.one", new BigInt64Array([1n]), []),
    initializer("c.zero", new BigInt64Array([0n]), []),
    initializer("c.heads_shape", new BigInt64Array([0n, 0n, BigInt(NH), BigInt(D)]), [4]),
    initializer("c.hidden_shape", new BigInt64Array([0n, 0n, BigInt(H)]), [3]),
    initializer("c.scale", new Float32Array([1 / Math.sqrt(D)]), []),
    initializer("c.masked", new Float32Array([MASKED]), []),
    initializer("c.axes01", new BigInt64Array([0n]), [1]),
    initializer("c.axes1", new BigInt64Array([1n]), [1]),
    initializer("c.axes12", new BigInt64Array([1n, 2n]), [2]),
  ];
  const n = (op: string, inputs: string[], output: string, attributes = {}) => {
    nodes.push(node(op, inputs, [output], attributes));
    return output;
  };
  // Positions: the queries are the last `seq` of the `past + seq` keys.
  n("Shape", ["input_ids"], "ids.shape");
  n("Gather", ["ids.shape", "c.one"], "seq", { axis: { int: 0 } });
  n("Shape", ["attention_mask"], "mask.shape");
  n("Gather", ["mask.shape", "c.one"], "total", { axis: { int: 0 } });
  n("Sub", ["total", "seq"], "past");
  n("Range", ["c.zero", "total", "c.one"], "key.index");
  n("Range", ["past", "total", "c.one"], "query.index");
  n("Unsqueeze", ["key.index", "c.axes01"], "key.row");
  n("Unsqueeze", ["query.index", "c.axes1"], "query.column");
  n("LessOrEqual", ["key.row", "query.column"], "causal");
  n("Cast", ["attention_mask"], "mask.bool", { to: { int: DataType.BOOL } });
  n("Unsqueeze", ["mask.bool", "c.axes12"], "mask.4d");
  n("And", ["causal", "mask.4d"], "allowed");
  n("Gather", ["wte", "input_ids"], "tok");
  n("Gather", ["wpe", "position_ids"], "pos");
  let x = n("Add", ["tok", "pos"], "x0");
  w.layers.forEach((layer, l) => {
    const p = `l${l}.`;
    inits.push(
      initializer(`${p}ln1.weight`, layer.ln1, [H]), initializer(`${p}ln1.bias`, layer.ln1b, [H]),
      initializer(`${p}wq`, layer.wq, [H, H]), initializer(`${p}wk`, layer.wk, [H, H]),
      initializer(`${p}wv`, layer.wv, [H, H]), initializer(`${p}wo`, layer.wo, [H, H]),
      initializer(`${p}ln2.weight`, layer.ln2, [H]), initializer(`${p}ln2.bias`, layer.ln2b, [H]),
      initializer(`${p}w1`, layer.w1, [H, I]), initializer(`${p}w2`, layer.w2, [I, H]),
    );
    const ln1 = n("LayerNormalization", [x, `${p}ln1.weight`, `${p}ln1.bias`], `${p}ln1`, { axis: { int: -1 }, epsilon: { float: EPSILON } });
    const heads = (name: string) => {
      n("MatMul", [ln1, `${p}w${name}`], `${p}${name}.flat`);
      n("Reshape", [`${p}${name}.flat`, "c.heads_shape"], `${p}${name}.split`);
      return n("Transpose", [`${p}${name}.split`], `${p}${name}`, { perm: { ints: [0, 2, 1, 3] } });
    };
    const q = heads("q");
    const k = heads("k");
    const v = heads("v");
    const presentKey = n("Concat", [`past_key_values.${l}.key`, k], `present.${l}.key`, { axis: { int: 2 } });
    const presentValue = n("Concat", [`past_key_values.${l}.value`, v], `present.${l}.value`, { axis: { int: 2 } });
    n("Transpose", [presentKey], `${p}kT`, { perm: { ints: [0, 1, 3, 2] } });
    n("MatMul", [q, `${p}kT`], `${p}scores.raw`);
    n("Mul", [`${p}scores.raw`, "c.scale"], `${p}scores`);
    n("Where", ["allowed", `${p}scores`, "c.masked"], `${p}scores.masked`);
    n("Softmax", [`${p}scores.masked`], `${p}attn`, { axis: { int: -1 } });
    n("MatMul", [`${p}attn`, presentValue], `${p}ctx`);
    n("Transpose", [`${p}ctx`], `${p}ctx.t`, { perm: { ints: [0, 2, 1, 3] } });
    n("Reshape", [`${p}ctx.t`, "c.hidden_shape"], `${p}ctx.flat`);
    n("MatMul", [`${p}ctx.flat`, `${p}wo`], `${p}attn.out`);
    x = n("Add", [x, `${p}attn.out`], `${p}x1`);
    const ln2 = n("LayerNormalization", [x, `${p}ln2.weight`, `${p}ln2.bias`], `${p}ln2`, { axis: { int: -1 }, epsilon: { float: EPSILON } });
    n("MatMul", [ln2, `${p}w1`], `${p}up`);
    n("Sigmoid", [`${p}up`], `${p}gate`);
    n("Mul", [`${p}up`, `${p}gate`], `${p}act`);
    n("MatMul", [`${p}act`, `${p}w2`], `${p}down`);
    x = n("Add", [x, `${p}down`], `${p}x2`);
  });
  n("LayerNormalization", [x, "lnf.weight", "lnf.bias"], "xf", { axis: { int: -1 }, epsilon: { float: EPSILON } });
  n("MatMul", ["xf", "lm_head"], "logits.raw");
  n("Add", ["logits.raw", "lm_head.bias"], "logits");
  const kv = (prefix: string, seqDim: string) =>
    Array.from({ length: spec.layers }, (_, l) =>
      ["key", "value"].map((part) => valueInfo(`${prefix}.${l}.${part}`, DataType.FLOAT, ["batch_size", NH, seqDim, D])),
    ).flat();
  const g = graph({
    name: "tensorfn_gpt",
    nodes,
    inputs: [
      valueInfo("input_ids", DataType.INT64, ["batch_size", "sequence_length"]),
      valueInfo("attention_mask", DataType.INT64, ["batch_size", "total_sequence_length"]),
      valueInfo("position_ids", DataType.INT64, ["batch_size", "sequence_length"]),
      ...kv("past_key_values", "past_sequence_length"),
    ],
    outputs: [valueInfo("logits", DataType.FLOAT, ["batch_size", "sequence_length", V]), ...kv("present", "total_sequence_length")],
    initializers: inits,
  });
  return encodeModel(g);
}

// ---------------------------------------------------------------- reference forward pass

export function layerNorm(x: Float64Array, g: Float32Array, b: Float32Array): Float64Array {
  let mean = 0;
  for (const v of x) mean += v;
  mean /= x.length;
  let variance = 0;
  for (const v of x) variance += (v - mean) ** 2;
  variance /= x.length;
  const inv = 1 / Math.sqrt(variance + EPSILON);
  return x.map((v, i) => (v - mean) * inv * g[i] + b[i]);
}

export function matVec(x: Float64Array, w: Float32Array, outputs: number): Float64Array {
  const out = new Float64Array(outputs);
  for (let i = 0; i < x.length; i++) for (let j = 0; j < outputs; j++) out[j] += x[i] * w[i * outputs + j];
  return out;
}

/** Logits of every position of `ids` (one sequence, no cache), computed in float64 from the same weights. */
export function decoderReference(ids: readonly number[]): Float64Array[] {
  const w = decoderWeights();
  const { hidden: H, heads: NH, headDim: D, intermediate: I } = DECODER;
  const V = decoderVocabSize();
  let xs = ids.map((id, t) => Float64Array.from({ length: H }, (_, h) => w.wte[id * H + h] + w.wpe[t * H + h]));
  for (const layer of w.layers) {
    const normed = xs.map((x) => layerNorm(x, layer.ln1, layer.ln1b));
    const q = normed.map((x) => matVec(x, layer.wq, H));
    const k = normed.map((x) => matVec(x, layer.wk, H));
    const v = normed.map((x) => matVec(x, layer.wv, H));
    xs = xs.map((x, t) => {
      const ctx = new Float64Array(H);
      for (let h = 0; h < NH; h++) {
        const scores = Array.from({ length: t + 1 }, (_, s) => {
          let dot = 0;
          for (let d = 0; d < D; d++) dot += q[t][h * D + d] * k[s][h * D + d];
          return dot / Math.sqrt(D);
        });
        const max = Math.max(...scores);
        const exps = scores.map((s) => Math.exp(s - max));
        const sum = exps.reduce((a, b) => a + b, 0);
        exps.forEach((e, s) => {
          for (let d = 0; d < D; d++) ctx[h * D + d] += (e / sum) * v[s][h * D + d];
        });
      }
      const attn = matVec(ctx, layer.wo, H);
      const x1 = x.map((value, i) => value + attn[i]);
      const up = matVec(layerNorm(x1, layer.ln2, layer.ln2b), layer.w1, I).map((u) => u / (1 + Math.exp(-u)));
      const down = matVec(up, layer.w2, H);
      return x1.map((value, i) => value + down[i]);
    });
  }
  return xs.map((x) => matVec(layerNorm(x, w.lnf, w.lnfb), w.lm, V).map((v, i) => v + w.lmBias[i]!));
}
