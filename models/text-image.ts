/**
 * Renders a line of text into an RGB image (black on white) with the bitmap
 * font, and prepares images the way PP-OCR's angle classifier expects, so the
 * OCR example can be tested with images generated on the fly.
 */
import { GLYPH_HEIGHT, GLYPH_WIDTH, glyph } from "./bitmap-font.ts";

/** An 8-bit RGB image, row-major, 3 interleaved channels per pixel. */
export interface RgbImage {
  width: number;
  height: number;
  data: Uint8Array;
}

/**
 * A text the PP-OCR angle classifier reads with certainty: p >= 0.99999 for
 * "upright" and, rotated 180 degrees, for "rotated" at scales 2-4.
 */
export const SAMPLE_TEXT = "PRICE 42";

/**
 * How to draw: `scale` image pixels per font pixel (4), `margin` white border (1 font pixel),
 * `spaceWidth` font pixels of a space (5, a whole glyph; printed type's word gap is nearer 2).
 */
export interface TextOptions {
  scale?: number;
  margin?: number;
  spaceWidth?: number;
}

/**
 * Draw `text` on a white background. Each font pixel becomes a scale x scale
 * black square, so strokes are `scale` pixels wide; glyphs are 1 font pixel apart.
 */
export function drawText(text: string, options: TextOptions = {}): RgbImage {
  const scale = options.scale ?? 4;
  const margin = options.margin ?? scale;
  const chars = [...text];
  const advanceOf = (char: string) => ((char === " " ? (options.spaceWidth ?? GLYPH_WIDTH) : GLYPH_WIDTH) + 1) * scale;
  const starts: number[] = [];
  let x = margin;
  for (const char of chars) {
    starts.push(x);
    x += advanceOf(char);
  }
  const width = x - scale + margin;
  const height = GLYPH_HEIGHT * scale + 2 * margin;
  const data = new Uint8Array(width * height * 3).fill(255);
  chars.forEach((char, index) => {
    glyph(char).forEach((row, gy) => {
      row.forEach((ink, gx) => {
        if (!ink) return;
        const x0 = starts[index]! + gx * scale;
        const y0 = margin + gy * scale;
        for (let y = y0; y < y0 + scale; y++) data.fill(0, (y * width + x0) * 3, (y * width + x0 + scale) * 3);
      });
    });
  });
  return { width, height, data };
}

/** How to lay out a page: `drawText`'s options for each line, the white `lineGap` between lines (pixels). */
export interface PageOptions extends TextOptions {
  lineGap?: number;
}

/** Lines of text one under another, left-aligned, black on white; `margin` is the page's border. */
export function drawPage(lines: readonly string[], options: PageOptions = {}): RgbImage {
  const margin = options.margin ?? 32;
  const gap = options.lineGap ?? 12;
  const drawn = lines.map((line) => drawText(line, { ...options, margin: 0 }));
  const width = Math.max(...drawn.map((d) => d.width)) + 2 * margin;
  const height = drawn.reduce((h, d) => h + d.height, 0) + gap * (lines.length - 1) + 2 * margin;
  const data = new Uint8Array(width * height * 3).fill(255);
  let top = margin;
  for (const d of drawn) {
    for (let y = 0; y < d.height; y++) data.set(d.data.subarray(y * d.width * 3, (y + 1) * d.width * 3), ((top + y) * width + margin) * 3);
    top += d.height + gap;
  }
  return { width, height, data };
}

/** The image turned upside down (rotated by 180 degrees). */
export function rotate180(image: RgbImage): RgbImage {
  const pixels = image.width * image.height;
  const data = new Uint8Array(image.data.length);
  for (let p = 0; p < pixels; p++) data.set(image.data.subarray(p * 3, p * 3 + 3), (pixels - 1 - p) * 3);
  return { width: image.width, height: image.height, data };
}

/**
 * The image turned by `degrees` counter-clockwise (as a page turned on a desk), on a canvas that
 * holds all of it, the corners white: bilinear, so strokes get grey edges as in a photographed page.
 */
export function rotate(image: RgbImage, degrees: number): RgbImage {
  const a = (degrees * Math.PI) / 180;
  const [cos, sin] = [Math.cos(a), Math.sin(a)];
  const width = Math.ceil(Math.abs(image.width * cos) + Math.abs(image.height * sin));
  const height = Math.ceil(Math.abs(image.width * sin) + Math.abs(image.height * cos));
  const data = new Uint8Array(width * height * 3).fill(255);
  const at = (x: number, y: number, c: number) => (x < 0 || y < 0 || x >= image.width || y >= image.height ? 255 : image.data[(y * image.width + x) * 3 + c]!);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      // The source point of this pixel's centre: the inverse turn about both images' centres.
      const dx = x + 0.5 - width / 2;
      const dy = y + 0.5 - height / 2;
      const sx = dx * cos - dy * sin + image.width / 2 - 0.5;
      const sy = dx * sin + dy * cos + image.height / 2 - 0.5;
      const x0 = Math.floor(sx);
      const y0 = Math.floor(sy);
      const [fx, fy] = [sx - x0, sy - y0];
      for (let c = 0; c < 3; c++) {
        const top = at(x0, y0, c) * (1 - fx) + at(x0 + 1, y0, c) * fx;
        const bottom = at(x0, y0 + 1, c) * (1 - fx) + at(x0 + 1, y0 + 1, c) * fx;
        data[(y * width + x) * 3 + c] = Math.round(top * (1 - fy) + bottom * fy);
      }
    }
  }
  return { width, height, data };
}

/** PP-OCR classifier input size: channels, height, maximum width. */
export const PPOCR_CLS_SHAPE = [3, 48, 192] as const;

/**
 * PP-OCR's angle-classifier preprocessing (ClsPreProcess.resize_norm_img):
 * resize to height 48 keeping the aspect ratio, width capped at 192
 * (bilinear, like cv2.resize), scale to [-1, 1] via (x/255 - 0.5)/0.5, and
 * zero-pad on the right. Returns a [1, 3, 48, 192] tensor, planar (CHW).
 * Channel order is kept as given; for black-on-white text it does not matter.
 */
export function ppocrClsPreprocess(rgb: Uint8Array, width: number, height: number): Float32Array {
  const [channels, outH, maxW] = PPOCR_CLS_SHAPE;
  const outW = Math.min(maxW, Math.ceil((outH * width) / height));
  const out = new Float32Array(channels * outH * maxW); // zeros = padding
  const sx = width / outW;
  const sy = height / outH;
  for (let y = 0; y < outH; y++) {
    const [y0, y1, fy] = sourceCoordinate(y, sy, height);
    for (let x = 0; x < outW; x++) {
      const [x0, x1, fx] = sourceCoordinate(x, sx, width);
      for (let c = 0; c < channels; c++) {
        const at = (yy: number, xx: number) => rgb[(yy * width + xx) * 3 + c];
        const top = at(y0, x0) * (1 - fx) + at(y0, x1) * fx;
        const bottom = at(y1, x0) * (1 - fx) + at(y1, x1) * fx;
        const value = top * (1 - fy) + bottom * fy;
        out[(c * outH + y) * maxW + x] = (value / 255 - 0.5) / 0.5;
      }
    }
  }
  return out;
}

// Half-pixel-centre mapping used by cv2.resize INTER_LINEAR: the two source
// indices to blend and the weight of the second.
function sourceCoordinate(dst: number, scale: number, size: number): [number, number, number] {
  const src = Math.min(Math.max((dst + 0.5) * scale - 0.5, 0), size - 1);
  const i0 = Math.floor(src);
  return [i0, Math.min(i0 + 1, size - 1), src - i0];
}
