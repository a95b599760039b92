// Boxes, the classifier's [N, 2] and the image → ocr_rec's input [N, 3, 48, W] and which lines were turned.
import type { HandlerContext, Tensor } from "tensorfn";
import { boxesOf, imageOf, numberParameter, recogniserInput, STEP_MAX_LINES, upsideDown } from "./ppocr.ts";

export function compute(inputs: { pixels: Tensor; boxes: Tensor; angle_probs: Tensor }, ctx: HandlerContext) {
  // A box is 36 bytes in and ~180 kB of line out: bound the rows, as ocr_boxes does, before allocating.
  const rows = inputs.boxes.shape[0]!;
  const most = numberParameter(ctx.parameters, "max_lines") ?? STEP_MAX_LINES;
  if (rows > most) throw ctx.error(`boxes has ${rows} rows; at most ${most} lines are read per image`);
  if (inputs.angle_probs.shape[0] !== rows) throw ctx.error(`angle_probs has ${inputs.angle_probs.shape[0]} rows for ${rows} boxes`);
  const turned = upsideDown(inputs.angle_probs);
  const lines = recogniserInput(imageOf(inputs.pixels), boxesOf(inputs.boxes), turned);
  return { lines, turned: { datatype: "BOOL", shape: [turned.length], data: Uint8Array.from(turned, Number) } };
}
