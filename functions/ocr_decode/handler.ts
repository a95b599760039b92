// ocr_rec's likeliest class per step and its probability, [N, steps] each → the lines as tensors:
// text, confidence, box (4 corners), angle.
import type { HandlerContext, Tensor } from "tensorfn";
import { boxesOf, decodeLines, parseDictionary, readingOrder } from "./ppocr.ts";

let dictionary: string[] = [];

export async function initialize(ctx: HandlerContext) {
  dictionary = parseDictionary(await ctx.readFile("ppocr_keys_v1.txt"));
}

export function compute(inputs: { classes: Tensor; scores: Tensor; boxes: Tensor; turned: Tensor }, ctx: HandlerContext) {
  const rows = inputs.boxes.shape[0]!;
  for (const name of ["classes", "scores", "turned"] as const) {
    if (inputs[name].shape[0] !== rows) throw ctx.error(`${name} has ${inputs[name].shape[0]} rows for ${rows} boxes`);
  }
  if (inputs.scores.shape[1] !== inputs.classes.shape[1]) throw ctx.error(`scores has ${inputs.scores.shape[1]} steps a line, classes ${inputs.classes.shape[1]}`);
  const turned = Array.from(inputs.turned.data as Uint8Array, Boolean);
  const lines = readingOrder(decodeLines(inputs.classes, inputs.scores, boxesOf(inputs.boxes), turned, dictionary));
  const utf8 = new TextEncoder();
  return {
    text: { datatype: "BYTES", shape: [lines.length], data: lines.map((l) => utf8.encode(l.text)) },
    confidence: { datatype: "FP32", shape: [lines.length], data: Float32Array.from(lines, (l) => l.confidence) },
    box: { datatype: "INT32", shape: [lines.length, 4, 2], data: Int32Array.from(lines.flatMap((l) => l.box.flat())) },
    angle: { datatype: "INT32", shape: [lines.length], data: Int32Array.from(lines, (l) => l.angle) },
  };
}
