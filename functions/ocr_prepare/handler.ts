// A PNG (one BYTES element) → the detector's input [1, 3, H, W] and the image [height, width, 3].
import type { HandlerContext, Tensor } from "tensorfn";
import { ImageError, decodeImage, detectorInput, imageTensor, numberParameter } from "./ppocr.ts";

export function compute(inputs: { image: Tensor }, ctx: HandlerContext) {
  const png = (inputs.image.data as Uint8Array[])[0]!;
  try {
    const image = decodeImage(png, numberParameter(ctx.parameters, "max_pixels"));
    return { x: detectorInput(image).tensor, pixels: imageTensor(image) };
  } catch (error) {
    if (error instanceof ImageError) throw ctx.error(error.message, error.status);
    throw error;
  }
}
