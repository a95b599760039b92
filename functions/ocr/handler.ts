// POST /v1/functions/ocr with a PNG (Content-Type: image/png, or {"image": "<base64>"} as JSON)
// → {"width", "height", "lines": [{"text", "confidence", "box", "angle"}]}, top to bottom.
// Each model goes through its own function (ocr_det, ocr_cls, ocr_rec) and so through its own
// queue and batcher: the lines of every request in flight share the recogniser's executions.
import type { FunctionRequest, HandlerContext } from "tensorfn";
import { ImageError, numberParameter, parseDictionary, readText } from "./ppocr.ts";
import type { OcrOptions } from "./ppocr.ts";

let dictionary: string[] = [];
let options: OcrOptions = {};

export async function initialize(ctx: HandlerContext) {
  dictionary = parseDictionary(await ctx.readFile("ppocr_keys_v1.txt"));
  options = { maxPixels: numberParameter(ctx.parameters, "max_pixels"), maxLines: numberParameter(ctx.parameters, "max_lines") };
}

/** One request at a time per call (max_batch_size 0); instance_group.count calls run at once. */
export async function execute([request]: FunctionRequest[], ctx: HandlerContext) {
  try {
    return [await readText(png(request, ctx), (name, inputs, outputs) => ctx.infer(name, inputs, { outputs }), dictionary, options)];
  } catch (error) {
    if (error instanceof ImageError) throw ctx.error(error.message, error.status);
    throw error;
  }
}

/** The PNG: the body itself, or the base64 `image` of a JSON body. */
function png(request: FunctionRequest, ctx: HandlerContext): Uint8Array {
  if (!request.contentType.startsWith("application/json")) return request.body;
  const image = (request.json<{ image?: unknown } | null>() ?? {}).image;
  if (typeof image !== "string") throw ctx.error('send a PNG, as the body (Content-Type: image/png) or as {"image": "<base64>"}');
  let binary: string;
  try {
    binary = atob(image);
  } catch {
    throw ctx.error("image is not base64");
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
