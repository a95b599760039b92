import ort from "onnxruntime-node";
import { describe, expect, it } from "vitest";
import { mulberry32, uniform } from "../../../models/prng.ts";
import { buildResnet } from "../../../models/resnet.ts";

describe("resnet", () => {
  it("has ResNet-18 metadata and gives finite, varied logits", { timeout: 30_000 }, async () => {
    const bytes = buildResnet();
    // ~11.7M float32 parameters.
    expect(bytes.length).toBeGreaterThan(46e6);
    expect(bytes.length).toBeLessThan(48e6);
    const session = await ort.InferenceSession.create(bytes);
    expect(session.inputNames).toEqual(["input"]);
    expect(session.outputNames).toEqual(["logits"]);
    expect(session.inputMetadata[0]).toMatchObject({ type: "float32", shape: ["batch", 3, 224, 224] });
    expect(session.outputMetadata[0]).toMatchObject({ type: "float32", shape: ["batch", 1000] });

    // One batch-1 inference takes well under a second on CPU.
    const input = uniform(mulberry32(3), 3 * 224 * 224, 1);
    const out = await session.run({ input: new ort.Tensor("float32", input, [1, 3, 224, 224]) });
    expect(out.logits.dims).toEqual([1, 1000]);
    const logits = Array.from(out.logits.data as Float32Array);
    expect(logits.every(Number.isFinite)).toBe(true);
    expect(Math.max(...logits) - Math.min(...logits)).toBeGreaterThan(1);
  });
});
