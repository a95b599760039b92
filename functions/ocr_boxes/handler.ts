// The detector's map → boxes [N, 9] (four corners x, y, then the score) and crops for ocr_cls [N, 3, 48, 192].
import type { HandlerContext, Tensor } from "tensorfn";
import { boxesFromMap, boxesTensor, classifierInput, imageOf, numberParameter, STEP_MAX_LINES } from "./ppocr.ts";

export function compute(inputs: { map: Tensor; pixels: Tensor }, ctx: HandlerContext) {
  const image = imageOf(inputs.pixels);
  const boxes = boxesFromMap(inputs.map, image, numberParameter(ctx.parameters, "max_lines") ?? STEP_MAX_LINES);
  return { boxes: boxesTensor(boxes), crops: classifierInput(image, boxes) };
}
