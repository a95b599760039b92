import * as ort from "onnxruntime-node";
import { Tokenizer } from "@huggingface/tokenizers";
import { describe, expect, it } from "vitest";
import { DECODER, buildDecoder, decoderReference, decoderSideFiles, specialTokenId } from "../../../models/decoder.ts";

describe("the example decoder (Optimum's layout)", () => {
  it("computes the reference forward pass's logits, with and without a past", async () => {
    const session = await ort.InferenceSession.create(buildDecoder());
    expect(session.inputNames).toEqual(["input_ids", "attention_mask", "position_ids", "past_key_values.0.key", "past_key_values.0.value", "past_key_values.1.key", "past_key_values.1.value"]);
    const ids = [72, 101, 108, 108, 111, 44, 32, 119];
    const int64 = (values: number[], dims: number[]) => new ort.Tensor("int64", BigInt64Array.from(values, BigInt), dims);
    const empty = () => new ort.Tensor("float32", new Float32Array(0), [1, DECODER.heads, 0, DECODER.headDim]);
    const pastFeeds = (make: (l: number, part: string) => ort.Tensor) => Object.fromEntries(Array.from({ length: DECODER.layers }, (_, l) => ["key", "value"].map((p) => [`past_key_values.${l}.${p}`, make(l, p)])).flat());
    const whole = await session.run({ input_ids: int64(ids, [1, 8]), attention_mask: int64(Array(8).fill(1), [1, 8]), position_ids: int64(ids.map((_, i) => i), [1, 8]), ...pastFeeds(empty) });
    const reference = decoderReference(ids);
    const V = reference[0]!.length;
    const logits = whole.logits!.data as Float32Array;
    for (let t = 0; t < 8; t++) for (let v = 0; v < V; v++) expect(Math.abs(logits[t * V + v]! - reference[t]![v]!)).toBeLessThan(1e-3);
    // The last token again, on the first seven's cache: the same logits.
    const first = await session.run({ input_ids: int64(ids.slice(0, 7), [1, 7]), attention_mask: int64(Array(7).fill(1), [1, 7]), position_ids: int64([0, 1, 2, 3, 4, 5, 6], [1, 7]), ...pastFeeds(empty) });
    const step = await session.run({ input_ids: int64([ids[7]!], [1, 1]), attention_mask: int64(Array(8).fill(1), [1, 8]), position_ids: int64([7], [1, 1]), ...pastFeeds((l, p) => first[`present.${l}.${p}`]!) });
    const last = step.logits!.data as Float32Array;
    for (let v = 0; v < V; v++) expect(Math.abs(last[v]! - reference[7]![v]!)).toBeLessThan(1e-3);
  });

  it("ships a tokenizer.json a maintained tokenizer reads, a ChatML template and generation defaults", () => {
    const files = decoderSideFiles();
    const tokenizer = new Tokenizer(JSON.parse(files["tokenizer.json"]!), JSON.parse(files["tokenizer_config.json"]!));
    const text = "Hello, world! Ünïcode ✓ 123";
    const { ids } = tokenizer.encode(text);
    expect(ids.length).toBeLessThan(new TextEncoder().encode(text).length); // merges apply
    expect(tokenizer.decode(ids)).toBe(text);
    expect(tokenizer.encode("<|im_end|>").ids).toEqual([specialTokenId("<|im_end|>")]);
    expect(JSON.parse(files["generation_config.json"]!).eos_token_id).toContain(specialTokenId("<|im_end|>"));
    expect(JSON.parse(files["tokenizer_config.json"]!).chat_template).toContain("<|im_start|>assistant");
  });
});

describe("the example encoder (Optimum's feature-extraction layout)", () => {
  it("pools the reference forward pass's mean embedding, whatever the padding beside it", async () => {
    const { buildEncoder, encoderReference } = await import("../../../models/encoder.ts");
    const session = await ort.InferenceSession.create(buildEncoder());
    const rows = [[72, 101, 108, 108, 111], [87, 111]];
    const int64 = (values: number[]) => new ort.Tensor("int64", BigInt64Array.from(values, BigInt), [2, 5]);
    const out = await session.run({ input_ids: int64([...rows[0]!, ...rows[1]!, 0, 0, 0]), attention_mask: int64([1, 1, 1, 1, 1, 1, 1, 0, 0, 0]) });
    const pooled = out.sentence_embedding!.data as Float32Array;
    rows.forEach((ids, r) => encoderReference(ids).forEach((v, h) => expect(Math.abs(pooled[r * 64 + h]! - v)).toBeLessThan(1e-4)));
  });
});
