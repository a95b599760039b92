/**
 * OpenAI's `/v1/embeddings` on an encoder (a function with `embedding` and its tokenizer): each
 * input tokenized (text, or token ids), padded to the longest of its group with `attention_mask`
 * 0, run in groups of at most `max_batch_size` through the model manager (the dynamic batcher
 * joins groups of equal shape), the output pooled over the unmasked positions where it has a
 * sequence axis, scaled to unit length with `normalize`, cut to `dimensions` when asked, and
 * answered as floats or base64 (little-endian FP32, as OpenAI's).
 */
import { RuntimeError } from "../core/mod.ts";
import type { InferRequest, Tensor } from "../core/mod.ts";
import { embeddingOutput } from "../config/mod.ts";
import type { Lease } from "../lifecycle/mod.ts";
import type { CallContext } from "./admission.ts";
import { CallOptions } from "./call-options.ts";
import type { DirectBody, HeaderLookup } from "./direct-body.ts";
import { admitOpenAi } from "./openai-call.ts";
import { encodeText, paramError as bad, tokenIds } from "./openai-request.ts";

/** Inputs per request at most (OpenAI's limit). */
export const MAX_EMBEDDING_INPUTS = 2048;
/** Tokens per input when neither config.json nor tokenizer_config.json says the model's length. */
const DEFAULT_MAX_TOKENS = 512;

export async function embeddingsCall(ctx: CallContext, header: HeaderLookup, body: DirectBody): Promise<string> {
  const { lease, d, parsed } = await admitOpenAi(ctx, header, body, "embedding");
  const codec = d.codec!;
  const { name: output, pooled } = embeddingOutput(d.config);
  const maxTokens = codec.maxPositions ?? DEFAULT_MAX_TOKENS;
  const vocab = codec.vocabSize;
  const inputs = readInputs(parsed.input, (text, param) => {
    if (text.length === 0) throw bad(param, "is empty");
    return encodeText(codec, text, param, maxTokens);
  }, vocab);
  inputs.forEach((ids, i) => {
    if (ids.length > maxTokens) throw bad(`input[${i}]`, `${ids.length} tokens, over the model's ${maxTokens}`);
  });
  const format = parsed.encoding_format ?? "float";
  if (format !== "float" && format !== "base64") throw bad("encoding_format", `must be float or base64, not ${JSON.stringify(format)}`);
  const dimensions = parsed.dimensions;
  if (dimensions !== undefined && (typeof dimensions !== "number" || !Number.isInteger(dimensions) || dimensions < 1)) throw bad("dimensions", "must be a positive integer");
  const group = Math.max(1, d.config.max_batch_size || inputs.length);
  const groups: number[][][] = [];
  for (let i = 0; i < inputs.length; i += group) groups.push(inputs.slice(i, i + group));
  const vectors = (await Promise.all(groups.map((g) => embedGroup(lease, body, g, output, pooled)))).flat();
  const hidden = vectors[0]!.length;
  if (dimensions !== undefined && dimensions > hidden) throw bad("dimensions", `${dimensions} is more than the model's ${hidden}`);
  const data = vectors.map((vector, index) => {
    let v = dimensions === undefined ? vector : vector.subarray(0, dimensions);
    if (d.config.embedding!.normalize) v = unit(v);
    return { object: "embedding", index, embedding: format === "base64" ? base64(v) : Array.from(v) };
  });
  const tokens = inputs.reduce((n, ids) => n + ids.length, 0);
  return JSON.stringify({ object: "list", data, model: parsed.model, usage: { prompt_tokens: tokens, total_tokens: tokens } });
}

/** `input`: a string, strings, token ids, or lists of token ids. */
function readInputs(input: unknown, encode: (text: string, param: string) => number[], vocab: number): number[][] {
  const ids = (list: unknown[], param: string) => tokenIds(list, param, vocab);
  if (typeof input === "string") return [encode(input, "input")];
  if (!Array.isArray(input) || input.length === 0) throw bad("input", "required: a string, a list of strings, or token ids");
  if (typeof input[0] === "number") return [ids(input, "input")];
  if (input.length > MAX_EMBEDDING_INPUTS) throw bad("input", `at most ${MAX_EMBEDDING_INPUTS} inputs per request`);
  return input.map((item, i) => {
    if (typeof item === "string") return encode(item, `input[${i}]`);
    if (Array.isArray(item)) return ids(item, `input[${i}]`);
    throw bad(`input[${i}]`, "must be a string or a list of token ids");
  });
}

/** One group through the model, padded to its longest input: a vector per input. */
async function embedGroup(lease: Lease, body: DirectBody, inputs: number[][], output: string, pooled: boolean): Promise<Float32Array[]> {
  const d = lease.deployment;
  const rows = inputs.length;
  const length = Math.max(...inputs.map((ids) => ids.length));
  const idData = new BigInt64Array(rows * length);
  const maskData = new BigInt64Array(rows * length);
  inputs.forEach((ids, r) => ids.forEach((id, t) => ((idData[r * length + t] = BigInt(id)), (maskData[r * length + t] = 1n))));
  const tensor = (data: BigInt64Array): Tensor => ({ datatype: "INT64", shape: [rows, length], data });
  const request: InferRequest = {
    parameters: {},
    inputs: [
      { name: "input_ids", tensor: tensor(idData) },
      { name: "attention_mask", tensor: tensor(maskData) },
      ...(d.config.input.some((i) => i.name === "token_type_ids") ? [{ name: "token_type_ids", tensor: tensor(new BigInt64Array(rows * length)) }] : []),
    ],
    outputs: [{ name: output }],
  };
  const response = await lease.infer(request, new CallOptions(body));
  const result = response.outputs.find((o) => o.name === output)?.tensor;
  if (!result) throw new RuntimeError("INTERNAL", `'${d.name}' answered without its output '${output}'`);
  const data = result.data as Float32Array;
  const hidden = result.shape.at(-1)!;
  return inputs.map((ids, r) => {
    if (pooled) return data.slice(r * hidden, (r + 1) * hidden);
    const vector = new Float32Array(hidden);
    const at = (t: number) => (r * length + t) * hidden;
    const pooling = d.config.embedding!.pooling;
    if (pooling === "cls" || pooling === "last") {
      const t = pooling === "cls" ? 0 : ids.length - 1;
      vector.set(data.subarray(at(t), at(t) + hidden));
      return vector;
    }
    for (let t = 0; t < ids.length; t++) for (let h = 0; h < hidden; h++) vector[h]! += data[at(t) + h]!;
    for (let h = 0; h < hidden; h++) vector[h]! /= ids.length;
    return vector;
  });
}

function unit(v: Float32Array): Float32Array {
  let sum = 0;
  for (const x of v) sum += x * x;
  const norm = Math.sqrt(sum) || 1;
  return Float32Array.from(v, (x) => x / norm);
}

function base64(v: Float32Array): string {
  const bytes = new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}
