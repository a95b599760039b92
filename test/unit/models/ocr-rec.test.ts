import ort from "onnxruntime-node";
import { describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildRecogniser, ppocrSourcePath, PPOCR_FILES, RECOGNISER_OUTPUTS } from "../../../models/ppocr.ts";
import { mulberry32 } from "../../../models/prng.ts";

describe("ocr_rec (PP-OCR recogniser with greedy CTC's reduction in the graph)", () => {
  it("answers, per step, the likeliest class of its softmax and that class's probability", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "ocr-rec-")), "model.onnx");
    await buildRecogniser(path);
    const session = await ort.InferenceSession.create(path, { intraOpNumThreads: 1 });
    const { probabilities, index, prob } = RECOGNISER_OUTPUTS;
    expect(session.outputNames).toEqual([probabilities, index, prob]);
    const random = mulberry32(5);
    const x = new ort.Tensor("float32", Float32Array.from({ length: 2 * 3 * 48 * 160 }, () => random() * 2 - 1), [2, 3, 48, 160]);
    const out = await session.run({ x });
    const [rows, steps, classes] = out[probabilities]!.dims as [number, number, number];
    expect([rows, steps]).toEqual([2, 20]);
    expect(out[index]!.dims).toEqual([2, 20]);
    const softmax = out[probabilities]!.data as Float32Array;
    for (let s = 0; s < rows * steps; s++) {
      let best = 0;
      for (let c = 1; c < classes; c++) if (softmax[s * classes + c]! > softmax[s * classes + best]!) best = c;
      expect(Number((out[index]!.data as BigInt64Array)[s])).toBe(best);
      expect((out[prob]!.data as Float32Array)[s]).toBe(softmax[s * classes + best]);
    }
    // Fetching only the two leaves the softmax inside onnxruntime, with the same answers.
    const small = await session.run({ x }, [index, prob]);
    expect(Object.keys(small).sort()).toEqual([index, prob]);
    expect(small[index]!.data).toEqual(out[index]!.data);
    await session.release();
  });

  it("`upToDate` tells a recogniser built before the CTC outputs (the package's file) from a current one", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "ocr-rec-")), "model.onnx");
    await buildRecogniser(path);
    expect(await buildRecogniser.upToDate(path)).toBe(true);
    expect(await buildRecogniser.upToDate(ppocrSourcePath(PPOCR_FILES.rec))).toBe(false);
  });
});
