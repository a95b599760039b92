import ort from "onnxruntime-node";
import { describe, expect, it } from "vitest";
import { ocrClsSourcePath } from "../../../models/ppocr.ts";
import { PPOCR_CLS_SHAPE, SAMPLE_TEXT, drawText, ppocrClsPreprocess, rotate180 } from "../../../models/text-image.ts";

const PLANE = 48 * 192;

describe("text images", () => {
  it("draws black text on white, and rotate180 is an involution", () => {
    const image = drawText("AB", { scale: 2, margin: 3 });
    expect([image.width, image.height]).toEqual([2 * 12 - 2 + 6, 14 + 6]);
    expect(image.data.length).toBe(image.width * image.height * 3);
    expect(new Set(image.data)).toEqual(new Set([0, 255]));
    expect(image.data.subarray(0, 3)).toEqual(new Uint8Array([255, 255, 255]));
    const rotated = rotate180(image);
    expect(rotated.data).not.toEqual(image.data);
    expect(rotate180(rotated).data).toEqual(image.data);
  });

  it("rejects characters the font lacks", () => {
    expect(() => drawText("a€")).toThrow(/no glyph/);
  });

  it("preprocesses like PP-OCR: height 48, [-1, 1], zero right padding", () => {
    // 96x24 resizes to 192x48 (full width); 48x24 to 96x48 (half padded).
    const white = { width: 48, height: 24, data: new Uint8Array(48 * 24 * 3).fill(255) };
    const x = ppocrClsPreprocess(white.data, white.width, white.height);
    expect(x.length).toBe(PPOCR_CLS_SHAPE[0] * PLANE);
    for (let c = 0; c < 3; c++) {
      expect(x[c * PLANE + 5 * 192 + 95]).toBe(1);
      expect(x[c * PLANE + 5 * 192 + 96]).toBe(0);
    }
    const black = ppocrClsPreprocess(new Uint8Array(96 * 24 * 3), 96, 24);
    expect(black.every((v) => v === -1)).toBe(true);
  });
});

describe("ocr_cls (PP-OCR angle classifier)", () => {
  it("tells upright text from text rotated by 180 degrees", async () => {
    const session = await ort.InferenceSession.create(ocrClsSourcePath());
    expect(session.inputNames).toEqual(["x"]);
    expect(session.outputNames).toEqual(["softmax_0.tmp_0"]);
    const upright = drawText(SAMPLE_TEXT);
    const rotated = rotate180(upright);
    const x = new Float32Array(2 * 3 * PLANE);
    x.set(ppocrClsPreprocess(upright.data, upright.width, upright.height));
    x.set(ppocrClsPreprocess(rotated.data, rotated.width, rotated.height), 3 * PLANE);
    const out = await session.run({ x: new ort.Tensor("float32", x, [2, 3, 48, 192]) });
    const p = out["softmax_0.tmp_0"].data as Float32Array;
    expect(p[0]).toBeGreaterThan(0.99); // upright -> class 0 ("0")
    expect(p[3]).toBeGreaterThan(0.99); // rotated -> class 1 ("180")
  });
});
