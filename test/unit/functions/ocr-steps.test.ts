import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { encode } from "fast-png";
import { deflateSync } from "node:zlib";
import { ImageError, boxesOf, boxesTensor, cropLine, ctcDecode, decodeImage, findBoxes, parseDictionary, recogniserWidth } from "../../../functions/ocr/ppocr.ts";
import type { Box } from "../../../functions/ocr/ppocr.ts";
import { chunk, ihdr, png } from "../../../harness/png-chunks.ts";

// The OCR example's own steps, on inputs small enough to check by hand (the models' part is in
// test/e2e/ocr.test.ts).
describe("decodeImage", () => {
  it("gives 8-bit RGB from RGB, grey, grey + alpha, RGBA and 16-bit PNGs; transparency over white", () => {
    const rgb = encode({ width: 2, height: 1, data: new Uint8Array([10, 20, 30, 40, 50, 60]), channels: 3, depth: 8 });
    expect(decodeImage(rgb)).toEqual({ width: 2, height: 1, data: new Uint8Array([10, 20, 30, 40, 50, 60]) });
    const grey = encode({ width: 2, height: 1, data: new Uint8Array([0, 200]), channels: 1, depth: 8 });
    expect([...decodeImage(grey).data]).toEqual([0, 0, 0, 200, 200, 200]);
    const greyAlpha = encode({ width: 2, height: 1, data: new Uint8Array([0, 0, 0, 255]), channels: 2, depth: 8 });
    expect([...decodeImage(greyAlpha).data]).toEqual([255, 255, 255, 0, 0, 0]); // transparent black is white
    const rgba = encode({ width: 1, height: 1, data: new Uint8Array([0, 0, 0, 128]), channels: 4, depth: 8 });
    expect([...decodeImage(rgba).data]).toEqual([127, 127, 127]);
    const deep = encode({ width: 1, height: 1, data: new Uint16Array([0xffff, 0x8000, 0x0100]), channels: 3, depth: 16 });
    expect([...decodeImage(deep).data]).toEqual([255, 128, 1]);
  });

  it("refuses what is not a PNG, and a header that declares too many pixels before inflating anything", () => {
    expect(() => decodeImage(new TextEncoder().encode("GIF89a and then some more bytes"))).toThrow(new ImageError("the image is not a PNG"));
    const png = encode({ width: 1, height: 1, data: new Uint8Array([0, 0, 0]), channels: 3, depth: 8 });
    const huge = png.slice();
    new DataView(huge.buffer).setUint32(16, 50_000);
    new DataView(huge.buffer).setUint32(20, 50_000);
    huge.fill(0, 33); // no valid data after the header: the size alone refuses it
    const refused = (() => {
      try {
        decodeImage(huge, 1 << 20);
      } catch (error) {
        return error as ImageError;
      }
    })();
    expect(refused).toBeInstanceOf(ImageError);
    expect(refused!.status).toBe(413);
    expect(() => decodeImage(png.slice(0, png.length - 20))).toThrow(/runs past the end of the file/);
  });
});

describe("decodeImage on hostile bytes", () => {
  it("refuses a decompression bomb (a 1×1 header over 50 MB of zeros) before holding it, as the client's 400", () => {
    const idat = chunk("IDAT", new Uint8Array(deflateSync(new Uint8Array(50 << 20), { level: 9 })));
    const bomb = png(ihdr(1, 1, 8, 2), idat); // 8-bit RGB
    expect(bomb.length).toBeLessThan(100_000);
    expect(() => decodeImage(bomb)).toThrow(new ImageError("the PNG's image data inflates to more than its 1×1 pixels need (4 bytes)"));
  });

  it("either decodes a damaged PNG to the size its header declares or refuses it with an ImageError, never anything else", () => {
    const pixels = Uint8Array.from({ length: 16 * 8 * 3 }, (_, i) => (i * 37) % 256);
    const valid = encode({ width: 16, height: 8, data: pixels, channels: 3, depth: 8 });
    const damage = fc.record({
      flips: fc.array(fc.tuple(fc.nat({ max: valid.length - 1 }), fc.integer({ min: 0, max: 255 })), { maxLength: 6 }),
      cut: fc.option(fc.nat({ max: valid.length }), { nil: undefined }),
    });
    fc.assert(
      fc.property(damage, ({ flips, cut }) => {
        const bytes = valid.slice(0, cut ?? valid.length);
        for (const [at, value] of flips) if (at < bytes.length) bytes[at] = value;
        try {
          const image = decodeImage(bytes, 1 << 16);
          expect(image.data.length).toBe(image.width * image.height * 3);
        } catch (error) {
          expect(error).toBeInstanceOf(ImageError);
        }
      }),
      { numRuns: 500, seed: 12 },
    );
  });
});

describe("findBoxes (DBNet post-processing)", () => {
  const map = (width: number, height: number, rects: [number, number, number, number, number][]) => {
    const prob = new Float32Array(width * height);
    for (const [x0, y0, x1, y1, p] of rects) for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) prob[y * width + x] = p;
    return prob;
  };

  it("finds text regions in reading order, grown by area × 1.5 / perimeter and scaled to the image", () => {
    // Two lines, the lower one first in memory order of its right half; a 2-pixel-high streak is noise.
    const prob = map(64, 32, [
      [4, 20, 24, 26, 0.9], // second line
      [4, 4, 24, 10, 0.95], // first line, left word
      [30, 4, 50, 10, 0.95], // first line, right word
      [40, 28, 60, 30, 0.99], // too thin
    ]);
    const boxes = findBoxes(prob, 64, 32, { width: 128, height: 64 });
    const grow = (20 * 6 * 1.5) / (2 * (20 + 6)); // 3.46 map pixels
    expect(boxes.map((b) => b.points[0].map((v) => Math.round(v)))).toEqual([
      [Math.round((4 - grow) * 2), Math.round((4 - grow) * 2)],
      [Math.round((30 - grow) * 2), Math.round((4 - grow) * 2)],
      [Math.round((4 - grow) * 2), Math.round((20 - grow) * 2)],
    ]);
    // An upright region's box is upright: corners clockwise from the top-left.
    const [x0, y0, x1, y1] = [4 - grow, 4 - grow, 24 + grow, 10 + grow].map((v) => v * 2);
    const expected = [[x0, y0], [x1, y0], [x1, y1], [x0, y1]];
    boxes[0]!.points.forEach((p, i) => p.forEach((v, j) => expect(v).toBeCloseTo(expected[i]![j]!, 5)));
    expect(boxes[0]!.score).toBeCloseTo(0.95, 5);
  });

  it("drops regions whose box averages under 0.6, clamps to the image, and keeps the largest when there are too many", () => {
    const faint = map(32, 32, [[2, 2, 20, 12, 0.4]]);
    expect(findBoxes(faint, 32, 32, { width: 32, height: 32 })).toEqual([]);
    const edge = findBoxes(map(32, 32, [[0, 0, 10, 6, 0.9]]), 32, 32, { width: 32, height: 32 });
    expect(edge[0]!.points[0]).toEqual([0, 0]);
    const many = map(64, 64, [
      [2, 2, 10, 8, 0.9],
      [2, 20, 40, 30, 0.9],
      [2, 40, 20, 50, 0.9],
    ]);
    const kept = findBoxes(many, 64, 64, { width: 64, height: 64 }, 2);
    // The 8 × 6 region at the top goes; the 38 × 10 and 18 × 10 ones stay, in reading order.
    // Both start at x = 2 and grow past the left edge (clamped to 0); the right edges show which stayed.
    expect(kept.map((b) => [b.points[0][0], Math.round(b.points[1][0])])).toEqual([38, 18].map((w) => [0, Math.round(2 + w + (w * 10 * 1.5) / (2 * (w + 10)))]));
    expect(kept[0]!.points[0][1]).toBeLessThan(kept[1]!.points[0][1]);
  });

  /** A map holding one bar `length` × `thickness` map pixels, turned `degrees` counter-clockwise about (cx, cy). */
  const bar = (size: number, cx: number, cy: number, length: number, thickness: number, degrees: number) => {
    const a = (degrees * Math.PI) / 180;
    const prob = new Float32Array(size * size);
    for (let y = 0; y < size; y++) {
      for (let x = 0; x < size; x++) {
        const [dx, dy] = [x + 0.5 - cx, y + 0.5 - cy];
        const along = dx * Math.cos(a) - dy * Math.sin(a);
        const across = dx * Math.sin(a) + dy * Math.cos(a);
        if (Math.abs(along) <= length / 2 && Math.abs(across) <= thickness / 2) prob[y * size + x] = 0.9;
      }
    }
    return prob;
  };
  const direction = (b: Box) => (Math.atan2(-(b.points[1][1] - b.points[0][1]), b.points[1][0] - b.points[0][0]) * 180) / Math.PI;
  const side = (p: [number, number], q: [number, number]) => Math.hypot(q[0] - p[0], q[1] - p[1]);

  it("fits a tilted region with a rectangle at its angle, the text running from its top-left corner", () => {
    for (const degrees of [20, -35]) {
      const [box] = findBoxes(bar(96, 48, 48, 60, 10, degrees), 96, 96, { width: 96, height: 96 });
      expect(Math.abs(direction(box!) - degrees)).toBeLessThan(2);
      // Grown by area × 1.5 / perimeter on every side; the pixels of a tilted bar reach up to a
      // pixel past its drawn edges, hence the tolerance.
      const grow = (60 * 10 * 1.5) / (2 * 70);
      expect(Math.abs(side(box!.points[0], box!.points[1]) - (60 + 2 * grow))).toBeLessThan(4);
      expect(Math.abs(side(box!.points[0], box!.points[3]) - (10 + 2 * grow))).toBeLessThan(4);
      expect(box!.score).toBeGreaterThan(0.8);
    }
  });

  it("runs vertical text top to bottom (a box 1.5 times taller than wide), as PaddleOCR turns such a crop", () => {
    const [box] = findBoxes(bar(96, 48, 48, 60, 10, 90), 96, 96, { width: 96, height: 96 });
    expect(Math.abs(direction(box!) + 90)).toBeLessThan(2);
    // Its top-left corner is the right-hand top one: the text's top faces right.
    expect(box!.points[0][0]).toBeGreaterThan(48);
    expect(box!.points[0][1]).toBeLessThan(48);
  });

  it("orders the lines of a turned page down the page along its text, whichever way it is turned", () => {
    // Three bars stacked across their direction, as three lines of a page turned by 30 degrees.
    for (const degrees of [30, -90]) {
      const prob = new Float32Array(128 * 128);
      const a = (degrees * Math.PI) / 180;
      const down: [number, number] = [Math.sin(a), Math.cos(a)]; // the page's "down" after the turn
      const lines = [-24, 0, 24].map((offset) => bar(128, 64 + down[0] * offset, 64 + down[1] * offset, 70, 8, degrees));
      lines.forEach((line) => line.forEach((p, i) => (prob[i] = Math.max(prob[i]!, p))));
      const boxes = findBoxes(prob, 128, 128, { width: 128, height: 128 });
      expect(boxes).toHaveLength(3);
      const centre = (b: Box) => b.points.reduce((s, p) => [s[0] + p[0] / 4, s[1] + p[1] / 4], [0, 0]);
      const along = boxes.map((b) => centre(b)[0] * down[0] + centre(b)[1] * down[1]);
      expect(along).toEqual([...along].sort((x, y) => x - y));
    }
  });
});

describe("boxes between ensemble steps, and crops", () => {
  const upright: Box = { points: [[2, 1], [10, 1], [10, 5], [2, 5]], score: 0.75 };

  it("pass as FP32 [N, 9]: four corners and the score, read back as they were", () => {
    const tensor = boxesTensor([upright]);
    expect(tensor.shape).toEqual([1, 9]);
    expect(boxesOf(tensor)).toEqual([upright]);
  });

  it("crop an upright box as the separable resize does, and a turned one as its mirror", () => {
    // A 12 × 6 gradient image; the 8 × 4 box becomes a 96 × 48 line (48 × 8 / 4).
    const image = { width: 12, height: 6, data: Uint8Array.from({ length: 12 * 6 * 3 }, (_, i) => (i * 7) % 256) };
    const width = 96;
    const line = new Float32Array(3 * 48 * width);
    const turned = new Float32Array(3 * 48 * width);
    cropLine(image, upright, false, line, 0, width, width);
    cropLine(image, upright, true, turned, 0, width, width);
    // Pixel (x, y) of the line samples the image at (2 + (x + 0.5) / 12 - 0.5, 1 + (y + 0.5) / 12 - 0.5).
    const sample = (sx: number, sy: number, channel: number) => {
      const [x0, y0] = [Math.floor(sx), Math.floor(sy)];
      const [fx, fy] = [sx - x0, sy - y0];
      const at = (x: number, y: number) => image.data[(y * 12 + x) * 3 + channel]!;
      const top = at(x0, y0) + (at(x0 + 1, y0) - at(x0, y0)) * fx;
      const bottom = at(x0, y0 + 1) + (at(x0 + 1, y0 + 1) - at(x0, y0 + 1)) * fx;
      return ((top + (bottom - top) * fy) * 2) / 255 - 1;
    };
    for (const [x, y] of [[0, 0], [40, 17], [95, 47]] as const) {
      const [sx, sy] = [2 + (x + 0.5) / 12 - 0.5, 1 + (y + 0.5) / 12 - 0.5];
      expect(line[y * width + x]).toBeCloseTo(sample(sx, sy, 2), 4); // plane 0 is blue
      expect(turned[(47 - y) * width + (95 - x)]).toBeCloseTo(sample(sx, sy, 2), 4);
    }
    // A box a hair off upright takes the per-pixel path (any angle): the same line, turned or not.
    const tilted: Box = { points: [[2, 1], [10, 1 + 1e-9], [10, 5], [2, 5]], score: 0.75 };
    for (const turn of [false, true]) {
      const viaAngle = new Float32Array(3 * 48 * width);
      cropLine(image, tilted, turn, viaAngle, 0, width, width);
      const upright = turn ? turned : line;
      expect(Math.max(...viaAngle.map((v, i) => Math.abs(v - upright[i]!)))).toBeLessThan(1e-4);
    }
  });
});

describe("ctcDecode", () => {
  it("takes the likeliest class per step, merges repeats, drops blanks, and averages the kept probabilities", () => {
    const dictionary = parseDictionary(new TextEncoder().encode("a\nb\n"));
    expect(dictionary).toEqual(["", "a", "b", " "]);
    // Steps: a a blank a b space → "aab " (the blank separates the two a's).
    const steps = [1, 1, 0, 1, 2, 3];
    const index = new BigInt64Array(2 * steps.length).fill(2n); // row 1 of 2; row 0 reads "b"
    const prob = new Float32Array(2 * steps.length);
    steps.forEach((c, t) => {
      index[steps.length + t] = BigInt(c);
      prob[steps.length + t] = 0.5 + t * 0.05;
    });
    const { text, confidence } = ctcDecode(index, prob, 1, steps.length, dictionary);
    expect(text).toBe("aab ");
    expect(confidence).toBeCloseTo((0.5 + 0.65 + 0.7 + 0.75) / 4, 6);
    expect(ctcDecode(index, prob, 0, steps.length, dictionary).text).toBe("b");
    expect(ctcDecode(new BigInt64Array(4), new Float32Array(4), 0, 2, dictionary)).toEqual({ text: "", confidence: 0 });
  });
});

describe("recogniserWidth", () => {
  it("fits the widest line at height 48 in steps of 160 between 320 and 960", () => {
    const box = (w: number, h: number): Box => ({ points: [[0, 0], [w, 0], [w, h], [0, h]], score: 1 });
    expect(recogniserWidth([box(100, 48)])).toBe(320);
    expect(recogniserWidth([box(100, 48), box(400, 48)])).toBe(480);
    expect(recogniserWidth([box(200, 10)])).toBe(960);
    // A box turned 30 degrees is as wide along its text as it was upright.
    const c = Math.cos(Math.PI / 6);
    const s = Math.sin(Math.PI / 6);
    expect(recogniserWidth([{ points: [[0, 200], [400 * c, 200 - 400 * s], [400 * c + 48 * s, 200 - 400 * s + 48 * c], [48 * s, 200 + 48 * c]], score: 1 }])).toBe(480);
    // Corners that are not numbers (a client's own boxes): the widest line, not a NaN-sized tensor.
    expect(recogniserWidth([{ points: [[NaN, 0], [1, 0], [1, 1], [0, 1]], score: 1 }])).toBe(960);
  });
});
