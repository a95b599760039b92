// PP-OCR's steps around its three models, in plain TypeScript: PNG → RGB, the detector's input,
// text boxes from its probability map (DBNet's post-processing), crops for the angle classifier and
// the recogniser, CTC decoding. `readText` chains them over any `run(function, inputs)`: the
// handler passes ctx.infer (each model through its own queue and batcher); bench/suites/ocr.ts passes
// three onnxruntime sessions called in sequence, the script a user would write by hand.
//
// Follows PaddleOCR's defaults (det_limit_side_len 960, det_db_thresh 0.3, det_db_box_thresh 0.6,
// det_db_unclip_ratio 1.5, cls_thresh 0.9, drop_score 0.5, images as BGR like cv2). Boxes are
// rectangles at any angle, as PaddleOCR fits them (the smallest rectangle around each region, its
// crop turned a quarter when it is 1.5 times taller than wide); the angle classifier turns the
// lines that read upside down.
import type { Tensor } from "tensorfn";
import { decodePng, ImageError } from "./png.ts";
import type { RgbImage } from "./png.ts";

export { ImageError } from "./png.ts";
export type { RgbImage } from "./png.ts";

/** One line of text: its string, the recogniser's mean confidence, the box it was read from. */
export interface TextLine {
  text: string;
  confidence: number;
  /** The box's corners in image pixels, clockwise from the top-left of its text (PaddleOCR's order). */
  box: [Point, Point, Point, Point];
  /** 180 when the angle classifier found it upside down (read after turning it). */
  angle: 0 | 180;
}

export interface OcrResult {
  width: number;
  height: number;
  lines: TextLine[];
}

/**
 * The functions readText calls, by name, with tensors in and out (ctx.infer, or sessions in a
 * script); `outputs`, where given, are the only ones it reads.
 */
export type RunFunction = (name: string, inputs: Record<string, Tensor>, outputs?: readonly string[]) => Promise<Record<string, Tensor>>;

export interface OcrOptions {
  /** Largest image accepted, in pixels (width × height): a tiny PNG can declare a huge image. */
  maxPixels?: number;
  /** Most text lines read per image (the largest boxes first). */
  maxLines?: number;
}

export const DEFAULT_MAX_PIXELS = 2048 * 2048;
export const DEFAULT_MAX_LINES = 64;

/** The models' tensor names (the exported PaddleOCR graphs'). */
export const TENSORS = {
  det: { input: "x", output: "sigmoid_0.tmp_0" },
  cls: { input: "x", output: "softmax_0.tmp_0" },
  // The recogniser as models/ builds it: its softmax, and per step the likeliest class and its
  // probability (greedy CTC's reduction, in the graph), which is all decoding reads.
  rec: { input: "x", output: "softmax_11.tmp_0", index: "ctc_index", prob: "ctc_prob" },
} as const;

// Lines per call of the classifier and the recogniser: what one call holds in memory at once
// (16 lines 960 wide: 8.8 MB). Each call's rows reach the models in requests of at most their
// max_batch_size (ctx.infer shares them out), so these need not match function.yaml.
const CLS_ROWS = 16;
const REC_ROWS = 16;
const CLS_WIDTH = 192;
/** Lines one image sends through the ensemble's steps: one call of each model, as readText makes it. */
export const STEP_MAX_LINES = Math.min(CLS_ROWS, REC_ROWS);

/** A number from function.yaml's `parameters` (plain strings), or undefined when absent or not a number. */
export function numberParameter(parameters: Readonly<Record<string, string>>, key: string): number | undefined {
  const value = parameters[key];
  return value !== undefined && value.trim() !== "" && Number.isFinite(Number(value)) ? Number(value) : undefined;
}
const LINE_HEIGHT = 48;

/** The recogniser's alphabet: index 0 is CTC's blank, then the dictionary's lines, then a space. */
export function parseDictionary(bytes: Uint8Array): string[] {
  const lines = new TextDecoder().decode(bytes).split(/\r?\n/);
  if (lines.at(-1) === "") lines.pop();
  return ["", ...lines, " "];
}

/**
 * PNG → image, PP-OCR's whole chain → its lines of text, top to bottom. Each model is called
 * with at most its function's max_batch_size rows at a time (the steps below, chunked).
 */
export async function readText(png: Uint8Array, run: RunFunction, dictionary: readonly string[], options: OcrOptions = {}): Promise<OcrResult> {
  const image = decodeImage(png, options.maxPixels ?? DEFAULT_MAX_PIXELS);
  const detOut = await run("ocr_det", { [TENSORS.det.input]: detectorInput(image).tensor });
  const boxes = boxesFromMap(detOut[TENSORS.det.output]!, image, options.maxLines ?? DEFAULT_MAX_LINES);
  if (boxes.length === 0) return { width: image.width, height: image.height, lines: [] }; // early exit: nothing to read

  const turned: boolean[] = [];
  for (const [, chunk] of chunks(boxes, CLS_ROWS)) {
    const out = await run("ocr_cls", { [TENSORS.cls.input]: classifierInput(image, chunk) });
    turned.push(...upsideDown(out[TENSORS.cls.output]!));
  }
  const width = recogniserWidth(boxes);
  const lines: TextLine[] = [];
  for (const [start, chunk] of chunks(boxes, REC_ROWS)) {
    const flags = turned.slice(start, start + chunk.length);
    const { index, prob } = TENSORS.rec;
    const out = await run("ocr_rec", { [TENSORS.rec.input]: recogniserInput(image, chunk, flags, width) }, [index, prob]);
    lines.push(...decodeLines(out[index]!, out[prob]!, chunk, flags, dictionary));
  }
  return { width: image.width, height: image.height, lines: readingOrder(lines) };
}

/** The detector's probability map [1, 1, h, w] → text boxes in image pixels, in reading order. */
export function boxesFromMap(map: Tensor, image: Pick<RgbImage, "width" | "height">, maxLines = DEFAULT_MAX_LINES): Box[] {
  return findBoxes(map.data as Float32Array, map.shape.at(-1)!, map.shape.at(-2)!, image, maxLines);
}

/** The angle classifier's input for these boxes: [N, 3, 48, 192]. */
export function classifierInput(image: RgbImage, boxes: readonly Box[]): Tensor {
  const x = new Float32Array(boxes.length * 3 * LINE_HEIGHT * CLS_WIDTH);
  boxes.forEach((box, i) => cropLine(image, box, false, x, i, CLS_WIDTH, CLS_WIDTH));
  return { datatype: "FP32", shape: [boxes.length, 3, LINE_HEIGHT, CLS_WIDTH], data: x };
}

/** Which lines the classifier's [N, 2] output finds upside down: class "180" with p > 0.9 (PaddleOCR's cls_thresh). */
export function upsideDown(probs: Tensor): boolean[] {
  const p = probs.data as Float32Array;
  return Array.from({ length: probs.shape[0]! }, (_, i) => p[i * 2 + 1]! > p[i * 2]! && p[i * 2 + 1]! > 0.9);
}

/** The recogniser's input: each box as a line 48 high, turned where flagged, padded to `width`: [N, 3, 48, width]. */
export function recogniserInput(image: RgbImage, boxes: readonly Box[], turned: readonly boolean[], width = recogniserWidth(boxes)): Tensor {
  const x = new Float32Array(boxes.length * 3 * LINE_HEIGHT * width);
  boxes.forEach((box, i) => cropLine(image, box, turned[i] ?? false, x, i, width, width));
  return { datatype: "FP32", shape: [boxes.length, 3, LINE_HEIGHT, width], data: x };
}

/**
 * The recogniser's [N, steps] likeliest classes and their probabilities → the lines it read
 * (PaddleOCR's drop_score: under 0.5 is noise, not text).
 */
export function decodeLines(index: Tensor, probs: Tensor, boxes: readonly Box[], turned: readonly boolean[], dictionary: readonly string[]): TextLine[] {
  const steps = index.shape[1]!;
  const lines: TextLine[] = [];
  boxes.forEach((box, i) => {
    const { text, confidence } = ctcDecode(index.data as BigInt64Array, probs.data as Float32Array, i, steps, dictionary);
    if (text.length > 0 && confidence >= 0.5) lines.push({ text, confidence, box: corners(box), angle: turned[i] ? 180 : 0 });
  });
  return lines;
}

/** Lines as a reader takes them: a page with most lines upside down reads from the bottom of the image up. */
export function readingOrder(lines: TextLine[]): TextLine[] {
  return lines.filter((l) => l.angle === 180).length * 2 > lines.length ? [...lines].reverse() : lines;
}

/** Values per box between ensemble steps: four corners (x, y), then the score. */
export const BOX_VALUES = 9;

/** Boxes as a tensor between ensemble steps: FP32 [N, 9], each the corners' x0, y0 … x3, y3, then the score. */
export function boxesTensor(boxes: readonly Box[]): Tensor {
  return { datatype: "FP32", shape: [boxes.length, BOX_VALUES], data: Float32Array.from(boxes.flatMap((b) => [...b.points.flat(), b.score])) };
}

export function boxesOf(tensor: Tensor): Box[] {
  const d = tensor.data as Float32Array;
  const point = (at: number): Point => [d[at]!, d[at + 1]!];
  return Array.from({ length: tensor.shape[0]! }, (_, i) => {
    const at = i * BOX_VALUES;
    return { points: [point(at), point(at + 2), point(at + 4), point(at + 6)], score: d[at + 8]! };
  });
}

/** An image as a tensor between ensemble steps: UINT8 [height, width, 3], RGB. */
export function imageTensor(image: RgbImage): Tensor {
  return { datatype: "UINT8", shape: [image.height, image.width, 3], data: image.data };
}

export function imageOf(tensor: Tensor): RgbImage {
  return { height: tensor.shape[0]!, width: tensor.shape[1]!, data: tensor.data as Uint8Array };
}

function* chunks<T>(items: readonly T[], size: number): Generator<[number, T[]]> {
  for (let start = 0; start < items.length; start += size) yield [start, items.slice(start, start + size)];
}

/**
 * A PNG as 8-bit RGB (png.ts): the header checked whole and the size against `maxPixels` before
 * anything is inflated, only the chunks a decoder needs read, the data inflated once into exactly
 * what the header declares; transparency is laid over white.
 */
export function decodeImage(png: Uint8Array, maxPixels = DEFAULT_MAX_PIXELS): RgbImage {
  return decodePng(png, maxPixels);
}

/** The detector's input: the image scaled so its longer side is at most 960, both sides multiples of 32, normalised as ImageNet. */
export function detectorInput(image: RgbImage, limitSide = 960): { tensor: Tensor; width: number; height: number } {
  const ratio = Math.min(1, limitSide / Math.max(image.width, image.height));
  const height = Math.max(32, Math.round((image.height * ratio) / 32) * 32);
  const width = Math.max(32, Math.round((image.width * ratio) / 32) * 32);
  const mean = [0.406, 0.456, 0.485]; // BGR, as PaddleOCR normalises cv2's images
  const std = [0.225, 0.224, 0.229];
  const data = new Float32Array(3 * height * width);
  resize(image, { x0: 0, y0: 0, x1: image.width, y1: image.height }, width, height, false, data, 0, width, height, (c) => [1 / (255 * std[c]!), -mean[c]! / std[c]!]);
  return { tensor: { datatype: "FP32", shape: [1, 3, height, width], data }, width, height };
}

/** A point [x, y] in image pixels. */
export type Point = [number, number];

/**
 * A text box in image pixels: a rectangle at any angle, its corners clockwise from the top-left
 * of its text (p0 → p1 runs along the text, p0 → p3 down its height), with the detector's mean
 * probability inside it. Corners are clipped to the image, as PaddleOCR clips them.
 */
export interface Box {
  points: [Point, Point, Point, Point];
  score: number;
}

/**
 * DBNet's post-processing: pixels over 0.3 form regions (4-connected); each region's smallest
 * enclosing rectangle (at any angle: convex hull, then rotating calipers, as cv2.minAreaRect) is
 * its box. A box under 3 map pixels thick, or whose region's probability mass averages under 0.6
 * over it, is noise; the rest grow by area × 1.5 / perimeter on every side (the detector predicts
 * shrunk text) and are scaled to the image. The score sums the region's own pixels (one pass over
 * the map in all, whatever the regions look like), where PaddleOCR averages every pixel inside the
 * box: the pixels it adds are under 0.3, and counted here as 0.
 */
export function findBoxes(prob: Float32Array, mapWidth: number, mapHeight: number, image: Pick<RgbImage, "width" | "height">, maxLines = DEFAULT_MAX_LINES): Box[] {
  const size = mapWidth * mapHeight;
  const seen = new Uint8Array(size);
  // The region being filled, in the order reached (a queue: it holds the whole region afterwards).
  const region = new Int32Array(size);
  // Each row's leftmost and rightmost pixel of a region that needs its hull: their corners hold it.
  const rowMin = new Int32Array(mapHeight).fill(mapWidth);
  const rowMax = new Int32Array(mapHeight).fill(-1);
  const hull = new Int32Array(8 * (mapHeight + 1)); // room for two chains over every row's two ends
  const sx = image.width / mapWidth;
  const sy = image.height / mapHeight;
  // Boxes become corners only once chosen: a hostile map can hold tens of thousands of regions.
  const found: { rect: Rectangle; grow: number; score: number; area: number }[] = [];
  for (let start = 0; start < size; start++) {
    if (seen[start] || !(prob[start]! > 0.3)) continue;
    let head = 0;
    let tail = 0;
    region[tail++] = start;
    seen[start] = 1;
    let x0 = mapWidth;
    let x1 = 0;
    let y0 = mapHeight;
    let y1 = 0;
    let mass = 0;
    while (head < tail) {
      const at = region[head++]!;
      const x = at % mapWidth;
      const y = (at - x) / mapWidth;
      mass += prob[at]!;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
      // The four neighbours over the threshold, each pushed once.
      if (x > 0 && !seen[at - 1] && prob[at - 1]! > 0.3) (seen[at - 1] = 1), (region[tail++] = at - 1);
      if (x < mapWidth - 1 && !seen[at + 1] && prob[at + 1]! > 0.3) (seen[at + 1] = 1), (region[tail++] = at + 1);
      if (y > 0 && !seen[at - mapWidth] && prob[at - mapWidth]! > 0.3) (seen[at - mapWidth] = 1), (region[tail++] = at - mapWidth);
      if (y < mapHeight - 1 && !seen[at + mapWidth] && prob[at + mapWidth]! > 0.3) (seen[at + mapWidth] = 1), (region[tail++] = at + mapWidth);
    }
    const count = tail;
    const w = x1 - x0 + 1;
    const h = y1 - y0 + 1;
    // Thinner than 3 along an axis is thinner than 3 at every angle: noise, before any geometry
    // (a map of specks is thousands of regions). A region that fills its bounds is its own box.
    if (Math.min(w, h) < 3) continue;
    let rect: Rectangle = { cx: x0 + w / 2, cy: y0 + h / 2, u: [1, 0], w, h };
    if (count < w * h) {
      for (let i = 0; i < count; i++) {
        const at = region[i]!;
        const x = at % mapWidth;
        const y = (at - x) / mapWidth;
        if (x < rowMin[y]!) rowMin[y] = x;
        if (x > rowMax[y]!) rowMax[y] = x;
      }
      rect = smallestRectangle(hull, regionHull(rowMin, rowMax, y0, y1, hull));
      for (let y = y0; y <= y1; y++) (rowMin[y] = mapWidth), (rowMax[y] = -1);
    }
    if (Math.min(rect.w, rect.h) < 3) continue;
    // The pixels inside the rectangle: the region's own, and along a tilted edge about half of the
    // staircase between them and the rectangle's side (those count as 0: they are under 0.3).
    const score = mass / Math.max(count, (count + rect.w * rect.h) / 2);
    if (score < 0.6) continue;
    const grow = (rect.w * rect.h * 1.5) / (2 * (rect.w + rect.h));
    found.push({ rect, grow, score, area: (rect.w + 2 * grow) * (rect.h + 2 * grow) });
  }
  // The largest first when there are too many, then in reading order.
  const kept = found.length > maxLines ? found.sort((a, b) => b.area - a.area).slice(0, maxLines) : found;
  return inReadingOrder(
    kept.map(({ rect, grow, score }) => ({ points: textCorners(rect, grow).map(([x, y]) => [clamp(x * sx, 0, image.width), clamp(y * sy, 0, image.height)] as Point) as Box["points"], score })),
  );
}

/**
 * Boxes as their lines read on the page, whichever way it is turned: along the boxes' mean
 * text direction, lines one after another down the page (centres within 10 pixels across the
 * text are one line), left to right on a line. Upright, that is top to bottom and left to right.
 */
function inReadingOrder(boxes: Box[]): Box[] {
  let [ex, ey] = [0, 0];
  for (const { points: [p0, p1] } of boxes) {
    const length = Math.hypot(p1[0] - p0[0], p1[1] - p0[1]) || 1;
    ex += (p1[0] - p0[0]) / length;
    ey += (p1[1] - p0[1]) / length;
  }
  const length = Math.hypot(ex, ey);
  [ex, ey] = length > 0 ? [ex / length, ey / length] : [1, 0];
  const place = new Map(boxes.map((b) => {
    const cx = b.points.reduce((sum, p) => sum + p[0], 0) / 4;
    const cy = b.points.reduce((sum, p) => sum + p[1], 0) / 4;
    return [b, { along: cx * ex + cy * ey, down: -cx * ey + cy * ex }];
  }));
  return boxes.sort((a, b) => {
    const [pa, pb] = [place.get(a)!, place.get(b)!];
    return Math.abs(pa.down - pb.down) < 10 ? pa.along - pb.along : pa.down - pb.down;
  });
}

/** A rectangle at any angle: its centre, unit axis `u` (the side `w` lies along; `h` is across it), and its extents. */
interface Rectangle {
  cx: number;
  cy: number;
  u: Point;
  w: number;
  h: number;
}

/**
 * The convex hull of a 4-connected region (every row between its first and last holds some of
 * it), from the corners of each row's end pixels (`rowMin`/`rowMax`), into `out` as x, y pairs;
 * returns the vertex count. Andrew's monotone chain, fed in (y, x) order without sorting: at each
 * horizontal grid line only the leftmost and rightmost corner can be a vertex.
 */
function regionHull(rowMin: Int32Array, rowMax: Int32Array, y0: number, y1: number, out: Int32Array): number {
  let n = 0;
  // Down the grid lines y0 … y1 + 1 (left end, then right end), then back up (right end, then left).
  for (let pass = 0; pass < 2; pass++) {
    const first = n;
    for (let k = 0; k <= y1 + 1 - y0; k++) {
      const g = pass === 0 ? y0 + k : y1 + 1 - k;
      // Grid line g touches the bottoms of row g - 1 and the tops of row g.
      const left = g === y0 ? rowMin[g]! : g > y1 ? rowMin[g - 1]! : Math.min(rowMin[g - 1]!, rowMin[g]!);
      const right = (g === y0 ? rowMax[g]! : g > y1 ? rowMax[g - 1]! : Math.max(rowMax[g - 1]!, rowMax[g]!)) + 1;
      for (let e = 0; e < 2; e++) {
        const x = (e === 0) === (pass === 0) ? left : right;
        while (n - first >= 2) {
          const [ax, ay, bx, by] = [out[2 * n - 4]!, out[2 * n - 3]!, out[2 * n - 2]!, out[2 * n - 1]!];
          if ((bx - ax) * (g - ay) - (by - ay) * (x - ax) > 0) break;
          n--;
        }
        out[2 * n] = x;
        out[2 * n + 1] = g;
        n++;
      }
    }
    n--; // the last point starts the other chain
  }
  return n;
}

/** The smallest-area rectangle around a convex polygon (`n` x, y pairs in `hull`): one of its sides lies on a hull edge (rotating calipers, tried edge by edge). */
function smallestRectangle(hull: Int32Array, n: number): Rectangle {
  let [bestArea, cu, cv, bux, buy, bw, bh] = [Infinity, 0, 0, 1, 0, 0, 0];
  for (let i = 0; i < n; i++) {
    const next = (i + 1) % n;
    const dx = hull[2 * next]! - hull[2 * i]!;
    const dy = hull[2 * next + 1]! - hull[2 * i + 1]!;
    const length = Math.hypot(dx, dy);
    if (length === 0) continue;
    const ux = dx / length;
    const uy = dy / length;
    let minU = Infinity;
    let maxU = -Infinity;
    let minV = Infinity;
    let maxV = -Infinity;
    for (let j = 0; j < n; j++) {
      const x = hull[2 * j]!;
      const y = hull[2 * j + 1]!;
      const pu = x * ux + y * uy;
      const pv = -x * uy + y * ux;
      if (pu < minU) minU = pu;
      if (pu > maxU) maxU = pu;
      if (pv < minV) minV = pv;
      if (pv > maxV) maxV = pv;
    }
    const a = (maxU - minU) * (maxV - minV);
    if (a < bestArea - 1e-9) [bestArea, cu, cv, bux, buy, bw, bh] = [a, (minU + maxU) / 2, (minV + maxV) / 2, ux, uy, maxU - minU, maxV - minV];
  }
  return { cx: cu * bux - cv * buy, cy: cu * buy + cv * bux, u: [bux, buy], w: bw, h: bh };
}

/**
 * A rectangle grown by `grow` on every side, as corners clockwise from the top-left of its text:
 * the text runs along the side nearer horizontal, left to right, unless the box is 1.5 times
 * taller than that (PaddleOCR's rule for vertical text): then it runs top to bottom, and a line
 * written the other way up is one the angle classifier turns.
 */
function textCorners(rect: Rectangle, grow: number): Point[] {
  let [ex, ey] = rect.u;
  let [along, across] = [rect.w + 2 * grow, rect.h + 2 * grow];
  if (Math.abs(ex) < Math.abs(ey)) [ex, ey, along, across] = [-ey, ex, across, along];
  if (ex < 0) [ex, ey] = [-ex, -ey];
  if (across >= 1.5 * along) [ex, ey, along, across] = [-ey, ex, across, along];
  // n: e turned a quarter clockwise on screen (y grows downwards), from the text's top edge to its bottom.
  const [nx, ny] = [-ey, ex];
  const x0 = rect.cx - (ex * along) / 2 - (nx * across) / 2;
  const y0 = rect.cy - (ey * along) / 2 - (ny * across) / 2;
  return [
    [x0, y0],
    [x0 + ex * along, y0 + ey * along],
    [x0 + ex * along + nx * across, y0 + ey * along + ny * across],
    [x0 + nx * across, y0 + ny * across],
  ];
}

/** A box's length along its text (p0 → p1) and its height (p0 → p3), in image pixels. */
function extents(box: Box): { along: number; across: number } {
  const [p0, p1, , p3] = box.points;
  return { along: Math.hypot(p1[0] - p0[0], p1[1] - p0[1]), across: Math.hypot(p3[0] - p0[0], p3[1] - p0[1]) };
}

/** The recogniser's input width for these boxes: every line at height 48, in steps of 160 from 320 to 960. */
export function recogniserWidth(boxes: readonly Box[]): number {
  const widest = Math.max(...boxes.map((b) => {
    const { along, across } = extents(b);
    return Math.ceil((LINE_HEIGHT * along) / Math.max(1, across));
  }));
  // A box a client sent with corners that are not numbers: the widest line, not a NaN-sized tensor.
  return Number.isNaN(widest) ? 960 : Math.min(960, Math.max(320, Math.ceil(widest / 160) * 160));
}

/**
 * Writes one box as row `row` of a [N, 3, 48, width] tensor: sampled along the box's text
 * (bilinear, half-pixel centres, edges repeated), 48 high keeping its aspect (at most `maxWidth`
 * wide), BGR, to [-1, 1], zero-padded on the right; turned 180° when asked. For an upright box
 * this is cv2.resize's INTER_LINEAR of the crop, as PaddleOCR's resize_norm_img does.
 */
export function cropLine(image: RgbImage, box: Box, turn: boolean, out: Float32Array, row: number, width: number, maxWidth: number): void {
  const { along, across } = extents(box);
  const lineW = Math.max(1, Math.min(maxWidth, Math.ceil((LINE_HEIGHT * along) / Math.max(1, across))));
  const [[x0, y0], [x1, y1], , [x3, y3]] = box.points;
  // An upright box (most of a page): the separable resize, a third cheaper than sampling each pixel.
  if (y1 === y0 && x3 === x0 && x1 > x0 && y3 > y0) {
    return resize(image, { x0, y0, x1, y1: y3 }, lineW, LINE_HEIGHT, turn, out, row * 3 * LINE_HEIGHT * width, width, LINE_HEIGHT, () => [2 / 255, -1]);
  }
  const src = image.data;
  const plane = LINE_HEIGHT * width;
  const base = row * 3 * plane;
  const [ex, ey, nx, ny] = [x1 - x0, y1 - y0, x3 - x0, y3 - y0];
  for (let y = 0; y < LINE_HEIGHT; y++) {
    const v = turn ? 1 - (y + 0.5) / LINE_HEIGHT : (y + 0.5) / LINE_HEIGHT;
    for (let x = 0; x < lineW; x++) {
      const u = turn ? 1 - (x + 0.5) / lineW : (x + 0.5) / lineW;
      const sxf = clamp(x0 + ex * u + nx * v - 0.5, 0, image.width - 1);
      const syf = clamp(y0 + ey * u + ny * v - 0.5, 0, image.height - 1);
      const ix = Math.floor(sxf);
      const iy = Math.floor(syf);
      const fx = sxf - ix;
      const fy = syf - iy;
      const r0 = (iy * image.width + ix) * 3;
      const r1 = (Math.min(iy + 1, image.height - 1) * image.width + ix) * 3;
      const dx = ix + 1 < image.width ? 3 : 0;
      for (let c = 0; c < 3; c++) {
        const channel = 2 - c; // BGR from RGB
        const top = src[r0 + channel]! + (src[r0 + dx + channel]! - src[r0 + channel]!) * fx;
        const bottom = src[r1 + channel]! + (src[r1 + dx + channel]! - src[r1 + channel]!) * fx;
        // To [-1, 1]: (v / 255 - 0.5) / 0.5.
        out[base + c * plane + y * width + x] = (top + (bottom - top) * fy) * (2 / 255) - 1;
      }
    }
  }
}

/**
 * Greedy CTC over row `row` of the likeliest class per step (`index`) and its probability
 * (`prob`): repeats merged, blanks dropped; confidence = the kept steps' mean probability.
 */
export function ctcDecode(index: BigInt64Array, prob: Float32Array, row: number, steps: number, dictionary: readonly string[]): { text: string; confidence: number } {
  let text = "";
  let sum = 0;
  let kept = 0;
  let previous = -1;
  for (let t = row * steps; t < (row + 1) * steps; t++) {
    const best = Number(index[t]!);
    if (best !== 0 && best !== previous) {
      text += dictionary[best] ?? "";
      sum += prob[t]!;
      kept++;
    }
    previous = best;
  }
  return { text, confidence: kept > 0 ? sum / kept : 0 };
}

/** An upright region of an image, in pixels. */
interface Region {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/**
 * Bilinear resize (cv2's INTER_LINEAR, half-pixel centres) of a region of `image` into a planar
 * BGR block of `out` at `base` (rows `stride` apart, planes `rows` rows apart), each value scaled
 * as `v * a + b` with [a, b] = norm(channel); turned 180° when asked. Source indices and weights
 * are computed once per row and column: per-pixel arithmetic only in the inner loop.
 */
function resize(image: RgbImage, region: Region, outW: number, outH: number, turn: boolean, out: Float32Array, base: number, stride: number, rows: number, norm: (channel: number) => [number, number]): void {
  const xs = taps(region.x0, (region.x1 - region.x0) / outW, outW, image.width, turn);
  const ys = taps(region.y0, (region.y1 - region.y0) / outH, outH, image.height, turn);
  const src = image.data;
  const rowBytes = image.width * 3;
  const plane = rows * stride;
  for (let c = 0; c < 3; c++) {
    const [a, b] = norm(c);
    const channel = 2 - c; // BGR from RGB
    const planeBase = base + c * plane;
    for (let y = 0; y < outH; y++) {
      const r0 = ys.i0[y]! * rowBytes + channel;
      const r1 = ys.i1[y]! * rowBytes + channel;
      const fy = ys.f[y]!;
      const at = planeBase + y * stride;
      for (let x = 0; x < outW; x++) {
        const c0 = xs.i0[x]! * 3;
        const c1 = xs.i1[x]! * 3;
        const fx = xs.f[x]!;
        const top = src[r0 + c0]! + (src[r0 + c1]! - src[r0 + c0]!) * fx;
        const bottom = src[r1 + c0]! + (src[r1 + c1]! - src[r1 + c0]!) * fx;
        out[at + x] = (top + (bottom - top) * fy) * a + b;
      }
    }
  }
}

/** For each output index: the two source indices to blend and the second one's weight (mirrored when turned). */
function taps(start: number, scale: number, count: number, size: number, turn: boolean): { i0: Int32Array; i1: Int32Array; f: Float32Array } {
  const i0 = new Int32Array(count);
  const i1 = new Int32Array(count);
  const f = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    const k = turn ? count - 1 - i : i;
    const src = clamp(start + (k + 0.5) * scale - 0.5, 0, size - 1);
    const lo = Math.floor(src);
    i0[i] = lo;
    i1[i] = Math.min(lo + 1, size - 1);
    f[i] = src - lo;
  }
  return { i0, i1, f };
}

function corners(box: Box): TextLine["box"] {
  return box.points.map(([x, y]) => [Math.round(x), Math.round(y)]) as TextLine["box"];
}

function clamp(v: number, lo: number, hi: number): number {
  return v < lo ? lo : v > hi ? hi : v;
}
