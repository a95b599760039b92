// Boxes, the classifier's [N, 2] and the image → ocr_rec's input [N, 3, 48, W] and which lines were turned.
import type { Tensor } from "../../runtime/mod.ts";
import { boxesOf, imageOf, recogniserInput, upsideDown } from "../ocr/ppocr.ts";

export function compute(inputs: { pixels: Tensor; boxes: Tensor; angle_probs: Tensor }) {
  const turned = upsideDown(inputs.angle_probs);
  const lines = recogniserInput(imageOf(inputs.pixels), boxesOf(inputs.boxes), turned);
  return { lines, turned: { datatype: "BOOL", shape: [turned.length], data: Uint8Array.from(turned, Number) } };
}
