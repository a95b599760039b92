import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { decode, encode } from "fast-png";
import { deflateSync } from "node:zlib";
import { decodePng, ImageError } from "../../../functions/ocr/png.ts";
import { chunk, idat, ihdr, pack, png } from "../../../harness/png-chunks.ts";

// The OCR example's PNG decoder against the shapes an untrusted client can send: chunks a decoder
// need not read, headers that lie, palettes out of range, every bit depth, interlacing.

function refusal(bytes: Uint8Array, maxPixels = 1 << 22): ImageError {
  try {
    decodePng(bytes, maxPixels);
  } catch (error) {
    if (error instanceof ImageError) return error;
    throw error;
  }
  throw new Error("decoded what it should have refused");
}

const grey = (values: number[]) => values.flatMap((v) => [v, v, v]);

describe("decodePng: chunks a decoder need not read", () => {
  it("skips an iCCP profile that inflates without limit, unread: a 100 kB body (100 MB inflated) decodes in milliseconds", () => {
    const zeros = new Uint8Array(deflateSync(new Uint8Array(100 << 20), { level: 9 }));
    const profile = new Uint8Array([...new TextEncoder().encode("icc"), 0, 0, ...zeros]);
    const bytes = png(ihdr(16, 16, 8, 0), chunk("iCCP", profile), idat(Array.from({ length: 16 }, () => Array(16).fill(7))));
    expect(bytes.length).toBeGreaterThan(100_000);
    const started = performance.now();
    const image = decodePng(bytes, 1 << 22);
    expect(performance.now() - started).toBeLessThan(200);
    expect(image.data.slice(0, 3)).toEqual(new Uint8Array([7, 7, 7]));
  });

  it("skips other ancillary chunks and refuses a critical one it does not know", () => {
    const rows = [[1, 2]];
    expect(decodePng(png(ihdr(2, 1, 8, 0), chunk("tEXt", new TextEncoder().encode("k\0v")), chunk("zTXt", new Uint8Array(100)), idat(rows)), 16).data).toEqual(Uint8Array.from(grey([1, 2])));
    expect(refusal(png(ihdr(2, 1, 8, 0), chunk("ABCD", new Uint8Array(3)), idat(rows))).message).toBe("the PNG has a critical chunk ABCD this decoder does not know");
  });
});

describe("decodePng: the header, checked whole before anything is inflated", () => {
  const rows = [[0]];
  it.each([
    ["a bit depth of 255", png(ihdr(1, 1, 255, 0), idat(rows)), "the PNG's bit depth 255 is not allowed for color type 0 (greyscale: 1, 2, 4, 8, 16)"],
    ["a 4-bit RGB image", png(ihdr(1, 1, 4, 2), idat(rows)), "the PNG's bit depth 4 is not allowed for color type 2 (RGB: 8, 16)"],
    ["a 16-bit palette", png(ihdr(1, 1, 16, 3), chunk("PLTE", new Uint8Array(3)), idat(rows)), "the PNG's bit depth 16 is not allowed for color type 3 (indexed: 1, 2, 4, 8)"],
    ["interlace method 2", png(ihdr(1, 1, 8, 0, 2), idat(rows)), "the PNG's interlace method 2 is unknown (0 or 1)"],
    ["color type 5", png(ihdr(1, 1, 8, 5), idat(rows)), "the PNG has an unknown color type 5"],
    ["no IHDR first", png(idat(rows), ihdr(1, 1, 8, 0)), "the PNG starts with a IDAT chunk, not IHDR"],
    ["a short IHDR", png(chunk("IHDR", new Uint8Array(12)), idat(rows)), "the PNG's IHDR chunk has 12 bytes, not 13"],
    ["two IHDRs", png(ihdr(1, 1, 8, 0), ihdr(1, 1, 8, 0), idat(rows)), "the PNG has more than one IHDR chunk"],
    ["a zero width", png(ihdr(0, 1, 8, 0), idat(rows)), "the PNG declares an empty image"],
  ])("refuses %s with a 400 naming it", (_what, bytes, message) => {
    const error = refusal(bytes);
    expect([error.status, error.message]).toEqual([400, message]);
  });

  it("refuses more pixels than allowed with a 413, whatever follows", () => {
    const error = refusal(png(ihdr(50_000, 50_000, 8, 0)), 1 << 20);
    expect([error.status, error.message]).toEqual([413, "the image is 50000×50000 pixels; at most 1048576 are accepted"]);
  });

  it("refuses image data that inflates past what the header declares, and data that falls short", () => {
    expect(refusal(png(ihdr(2, 2, 8, 0), idat([[1, 2], [3, 4], [5, 6]]))).message).toBe("the PNG's image data inflates to more than its 2×2 pixels need (6 bytes)");
    expect(refusal(png(ihdr(2, 2, 8, 0), idat([[1, 2]]))).message).toBe("the PNG's image data holds 3 bytes; its 2×2 pixels need 6");
    expect(refusal(png(ihdr(1, 1, 8, 0), chunk("IDAT", new Uint8Array([1, 2, 3])))).message).toMatch(/^the PNG's image data is not a valid zlib stream/);
  });
});

describe("decodePng: palettes", () => {
  it.each([
    ["an empty PLTE", png(ihdr(1, 1, 8, 3), chunk("PLTE", new Uint8Array()), idat([[0]])), "the PNG's palette (PLTE) has 0 bytes: it must hold 1 to 256 RGB entries"],
    ["a 60 MB PLTE", png(ihdr(1, 1, 8, 3), chunk("PLTE", new Uint8Array(60 << 20)), idat([[0]])), "the PNG's palette (PLTE) has 62914560 bytes: it must hold 1 to 256 RGB entries"],
    ["an index past the palette", png(ihdr(2, 1, 8, 3), chunk("PLTE", new Uint8Array([1, 2, 3])), idat([[0, 5]])), "the PNG's pixel (1, 0) uses palette entry 5 of 1"],
    ["no palette", png(ihdr(1, 1, 8, 3), idat([[0]])), "the PNG is indexed but has no palette (PLTE)"],
    ["more alphas than entries", png(ihdr(1, 1, 8, 3), chunk("PLTE", new Uint8Array(3)), chunk("tRNS", new Uint8Array(2)), idat([[0]])), "the PNG's tRNS chunk has 2 entries for a palette of 1"],
  ])("refuses %s with a 400", (_what, bytes, message) => {
    const error = refusal(bytes);
    expect([error.status, error.message]).toEqual([400, message]);
  });

  it("decodes 1-, 2-, 4- and 8-bit indices through the palette, with tRNS alpha over white", () => {
    const palette = chunk("PLTE", Uint8Array.from(Array.from({ length: 16 }, (_, i) => [i * 10, i * 10 + 1, i * 10 + 2]).flat()));
    for (const depth of [1, 2, 4, 8]) {
      const indices = Array.from({ length: 9 }, (_, i) => i % Math.min(16, 1 << depth));
      const image = decodePng(png(ihdr(9, 1, depth, 3), palette, idat([pack(indices, depth)])), 100);
      expect([...image.data], `depth ${depth}`).toEqual(indices.flatMap((i) => [i * 10, i * 10 + 1, i * 10 + 2]));
    }
    const seeThrough = decodePng(png(ihdr(2, 1, 8, 3), palette, chunk("tRNS", new Uint8Array([0])), idat([[0, 1]])), 100);
    expect([...seeThrough.data]).toEqual([255, 255, 255, 10, 11, 12]);
  });
});

describe("decodePng: every bit depth, interlacing", () => {
  it("reads 1-, 2- and 4-bit greyscale at full range (a 1-bit page's black text stays black on white)", () => {
    for (const depth of [1, 2, 4]) {
      const max = (1 << depth) - 1;
      const samples = Array.from({ length: 11 }, (_, i) => i % (max + 1));
      const image = decodePng(png(ihdr(11, 2, depth, 0), idat([pack(samples, depth), pack(samples.map((s) => max - s), depth)])), 100);
      const expected = [...samples, ...samples.map((s) => max - s)].map((s) => Math.round((s * 255) / max));
      expect([...image.data], `depth ${depth}`).toEqual(grey(expected));
    }
  });

  it("lays a greyscale or RGB colour key (tRNS) over white", () => {
    expect([...decodePng(png(ihdr(2, 1, 8, 0), chunk("tRNS", new Uint8Array([0, 9])), idat([[9, 8]])), 4).data]).toEqual([255, 255, 255, 8, 8, 8]);
    expect([...decodePng(png(ihdr(2, 1, 8, 2), chunk("tRNS", new Uint8Array([0, 1, 0, 2, 0, 3])), idat([[1, 2, 3, 1, 2, 4]])), 4).data]).toEqual([255, 255, 255, 1, 2, 4]);
  });

  it("decodes what fast-png encodes, for every channel count and 8/16 bits, with its filters", () => {
    const arbitrary = fc.record({
      width: fc.integer({ min: 1, max: 9 }),
      height: fc.integer({ min: 1, max: 9 }),
      channels: fc.integer({ min: 1, max: 4 }),
      depth: fc.constantFrom(8, 16),
      seed: fc.nat(),
    });
    fc.assert(
      fc.property(arbitrary, ({ width, height, channels, depth, seed }) => {
        const n = width * height * channels;
        const data = depth === 8 ? Uint8Array.from({ length: n }, (_, i) => (i * 73 + seed) & 255) : Uint16Array.from({ length: n }, (_, i) => (i * 7919 + seed) & 65535);
        const bytes = encode({ width, height, data, channels, depth: depth as 8 | 16 });
        const reference = decode(bytes);
        const ours = decodePng(bytes, 1 << 10);
        const shift = depth === 16 ? 8 : 0;
        for (let p = 0; p < width * height; p++) {
          const at = p * channels;
          const sample = (c: number) => (reference.data[at + c] as number) >> shift;
          const alpha = channels === 2 || channels === 4 ? sample(channels - 1) / 255 : 1;
          const colour = channels < 3 ? [sample(0), sample(0), sample(0)] : [sample(0), sample(1), sample(2)];
          expect([...ours.data.subarray(p * 3, p * 3 + 3)]).toEqual(colour.map((c) => Math.round(c * alpha + 255 * (1 - alpha))));
        }
      }),
      { numRuns: 200, seed: 3 },
    );
  });

  it("decodes an Adam7-interlaced image to the same pixels as the same image not interlaced", () => {
    const [width, height] = [13, 11];
    const value = (x: number, y: number) => (x * 31 + y * 17) & 255;
    const plain = png(ihdr(width, height, 8, 0), idat(Array.from({ length: height }, (_, y) => Array.from({ length: width }, (_, x) => value(x, y)))));
    const rows: number[][] = [];
    for (const [x0, y0, dx, dy] of [[0, 0, 8, 8], [4, 0, 8, 8], [0, 4, 4, 8], [2, 0, 4, 4], [0, 2, 2, 4], [1, 0, 2, 2], [0, 1, 1, 2]] as const) {
      for (let y = y0; y < height; y += dy) {
        const row: number[] = [];
        for (let x = x0; x < width; x += dx) row.push(value(x, y));
        if (row.length > 0) rows.push(row);
      }
    }
    const interlaced = png(ihdr(width, height, 8, 0, 1), idat(rows));
    expect(decodePng(interlaced, 1000)).toEqual(decodePng(plain, 1000));
  });
});
