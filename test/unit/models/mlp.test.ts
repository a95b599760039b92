import ort from "onnxruntime-node";
import { describe, expect, it } from "vitest";
import { buildMlp, mlpReference } from "../../../models/mlp.ts";
import { mulberry32, uniform } from "../../../models/prng.ts";

describe("mlp", () => {
  it("matches the TypeScript reference and outputs distributions", async () => {
    const session = await ort.InferenceSession.create(buildMlp());
    expect(session.inputNames).toEqual(["input"]);
    expect(session.outputNames).toEqual(["probabilities"]);
    const batch = 3;
    const input = uniform(mulberry32(7), batch * 512, 1);
    const out = await session.run({ input: new ort.Tensor("float32", input, [batch, 512]) });
    expect(out.probabilities.dims).toEqual([batch, 10]);
    const got = out.probabilities.data as Float32Array;
    const want = mlpReference(input, batch);
    for (let i = 0; i < want.length; i++) expect(got[i]).toBeCloseTo(want[i], 4);
    for (let row = 0; row < batch; row++) {
      const sum = got.subarray(row * 10, row * 10 + 10).reduce((s, p) => s + p, 0);
      expect(sum).toBeCloseTo(1, 5);
    }
    // Not a degenerate (uniform) classifier: rows differ.
    expect(Array.from(got.subarray(0, 10))).not.toEqual(Array.from(got.subarray(10, 20)));
  });
});
