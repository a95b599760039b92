// A PNG decoder for untrusted images: the header is checked whole before anything is inflated, only
// the chunks a decoder needs are read (IHDR, PLTE, tRNS, IDAT, IEND; colour profiles, text and
// other ancillary chunks are skipped unread, so none of them can be inflated), and the image data
// is inflated once, straight into a buffer of exactly the size its header declares: more is
// refused as it appears, less is refused at the end. Every colour type and bit depth PNG allows,
// interlaced or not, comes out as 8-bit RGB with transparency laid over white.
import { Unzlib } from "fflate";

/** An 8-bit image with 3 interleaved channels per pixel, row-major, in RGB order. */
export interface RgbImage {
  width: number;
  height: number;
  data: Uint8Array;
}

/** A refused image (not a PNG, too large, corrupt): the client's mistake, with the status to answer. */
export class ImageError extends Error {
  readonly status: number;
  constructor(message: string, status = 400) {
    super(message);
    this.name = "ImageError";
    this.status = status;
  }
}

const SIGNATURE = [137, 80, 78, 71, 13, 10, 26, 10];

/** Samples per pixel, and the bit depths PNG allows, by colour type. */
const COLOR_TYPES: Record<number, { channels: number; depths: readonly number[]; name: string }> = {
  0: { channels: 1, depths: [1, 2, 4, 8, 16], name: "greyscale" },
  2: { channels: 3, depths: [8, 16], name: "RGB" },
  3: { channels: 1, depths: [1, 2, 4, 8], name: "indexed" },
  4: { channels: 2, depths: [8, 16], name: "greyscale with alpha" },
  6: { channels: 4, depths: [8, 16], name: "RGBA" },
};

/** Adam7's passes: where each starts and how far apart its pixels lie, in x and y. */
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const;
const WHOLE = [[0, 0, 1, 1]] as const;

interface Header {
  width: number;
  height: number;
  depth: number;
  colorType: number;
  channels: number;
  interlaced: boolean;
}

/** Deflate data fed to the inflater at a time: one push inflates at most ~1000× what it is given before the size check sees it. */
const FEED_BYTES = 1024;

/** Whether `bytes` start with PNG's signature. */
export function isPng(bytes: Uint8Array): boolean {
  return bytes.length >= 8 && SIGNATURE.every((b, i) => bytes[i] === b);
}

/** A PNG as 8-bit RGB, refusing (ImageError, 400; 413 past `maxPixels`) anything malformed or larger than it says. */
export function decodePng(png: Uint8Array, maxPixels: number): RgbImage {
  if (!isPng(png)) throw new ImageError("the image is not a PNG");
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  let header: Header | undefined;
  let palette: Uint8Array | undefined;
  let transparency: Uint8Array | undefined;
  const data: Uint8Array[] = [];
  let dataEnded = false;
  for (let at = 8; ; ) {
    if (at + 12 > png.length) {
      if (header && data.length > 0) break; // IEND missing, everything needed read: accept, as most decoders do
      throw new ImageError("the PNG ends before its image data");
    }
    const length = view.getUint32(at);
    const type = chunkType(png, at + 4);
    if (length > png.length - at - 12) throw new ImageError(`the PNG's ${type} chunk (${length} bytes) runs past the end of the file`);
    const body = png.subarray(at + 8, at + 8 + length);
    at += 12 + length;
    if (!header) {
      if (type !== "IHDR") throw new ImageError(`the PNG starts with a ${type} chunk, not IHDR`);
      header = readHeader(body, maxPixels);
      continue;
    }
    if (type === "IEND") break;
    if (type !== "IDAT" && data.length > 0) dataEnded = true;
    switch (type) {
      case "IDAT":
        if (dataEnded) throw new ImageError("the PNG's IDAT chunks do not follow each other");
        data.push(body);
        break;
      case "PLTE":
        if (palette) throw new ImageError("the PNG has more than one PLTE chunk");
        if (data.length > 0) throw new ImageError("the PNG's PLTE chunk comes after its image data");
        if (length === 0 || length % 3 !== 0 || length > 768) throw new ImageError(`the PNG's palette (PLTE) has ${length} bytes: it must hold 1 to 256 RGB entries`);
        palette = body;
        break;
      case "tRNS":
        if (transparency) throw new ImageError("the PNG has more than one tRNS chunk");
        transparency = checkTransparency(body, header, palette);
        break;
      case "IHDR":
        throw new ImageError("the PNG has more than one IHDR chunk");
      default:
        // Bit 5 of the first letter: lowercase is ancillary (safe to skip unread), uppercase critical.
        if ((type.charCodeAt(0) & 0x20) === 0) throw new ImageError(`the PNG has a critical chunk ${type} this decoder does not know`);
    }
  }
  if (data.length === 0) throw new ImageError("the PNG has no image data (IDAT)");
  if (header.colorType === 3 && !palette) throw new ImageError("the PNG is indexed but has no palette (PLTE)");
  const raw = inflate(data, header);
  return toRgb(raw, header, header.colorType === 3 ? palette : undefined, transparency);
}

function chunkType(png: Uint8Array, at: number): string {
  const codes = [png[at]!, png[at + 1]!, png[at + 2]!, png[at + 3]!];
  if (!codes.every((c) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122))) throw new ImageError("the PNG has a chunk whose type is not four letters");
  return String.fromCharCode(...codes);
}

function readHeader(body: Uint8Array, maxPixels: number): Header {
  if (body.length !== 13) throw new ImageError(`the PNG's IHDR chunk has ${body.length} bytes, not 13`);
  const view = new DataView(body.buffer, body.byteOffset, 13);
  const [width, height] = [view.getUint32(0), view.getUint32(4)];
  const [depth, colorType, compression, filter, interlace] = [body[8]!, body[9]!, body[10]!, body[11]!, body[12]!];
  if (width === 0 || height === 0) throw new ImageError("the PNG declares an empty image");
  if (width > 0x7fffffff || height > 0x7fffffff) throw new ImageError(`the PNG declares ${width}×${height} pixels, beyond PNG's limit of 2^31 - 1 per side`);
  const kind = COLOR_TYPES[colorType];
  if (!kind) throw new ImageError(`the PNG has an unknown color type ${colorType}`);
  if (!kind.depths.includes(depth)) throw new ImageError(`the PNG's bit depth ${depth} is not allowed for color type ${colorType} (${kind.name}: ${kind.depths.join(", ")})`);
  if (compression !== 0 || filter !== 0) throw new ImageError(`the PNG's compression method ${compression} or filter method ${filter} is unknown (both must be 0)`);
  if (interlace > 1) throw new ImageError(`the PNG's interlace method ${interlace} is unknown (0 or 1)`);
  if (width * height > maxPixels) throw new ImageError(`the image is ${width}×${height} pixels; at most ${maxPixels} are accepted`, 413);
  return { width, height, depth, colorType, channels: kind.channels, interlaced: interlace === 1 };
}

/** tRNS, checked against what it may hold for the colour type (one alpha per palette entry at most; one colour key). */
function checkTransparency(body: Uint8Array, header: Header, palette: Uint8Array | undefined): Uint8Array | undefined {
  switch (header.colorType) {
    case 3:
      if (!palette) throw new ImageError("the PNG's tRNS chunk comes before its palette");
      if (body.length > palette.length / 3) throw new ImageError(`the PNG's tRNS chunk has ${body.length} entries for a palette of ${palette.length / 3}`);
      return body;
    case 0:
    case 2: {
      const expected = header.colorType === 0 ? 2 : 6;
      if (body.length !== expected) throw new ImageError(`the PNG's tRNS chunk has ${body.length} bytes; a ${COLOR_TYPES[header.colorType]!.name} image's has ${expected}`);
      return body;
    }
    default:
      return undefined; // alpha channels carry their own: the chunk is meaningless, skipped
  }
}

/** The passes of the image (Adam7's seven, or the whole image), each with its size in pixels and bytes. */
function passes(header: Header): { x0: number; y0: number; dx: number; dy: number; width: number; height: number; rowBytes: number }[] {
  const bitsPerPixel = header.channels * header.depth;
  return (header.interlaced ? ADAM7 : WHOLE)
    .map(([x0, y0, dx, dy]) => {
      const width = Math.ceil((header.width - x0) / dx);
      const height = Math.ceil((header.height - y0) / dy);
      return { x0, y0, dx, dy, width, height, rowBytes: Math.ceil((width * bitsPerPixel) / 8) };
    })
    .filter((p) => p.width > 0 && p.height > 0);
}

/** Inflates the IDAT data into exactly the bytes the header declares (each row: a filter byte and its pixels). */
function inflate(parts: readonly Uint8Array[], header: Header): Uint8Array {
  const expected = passes(header).reduce((n, p) => n + p.height * (1 + p.rowBytes), 0);
  const { width, height } = header;
  const out = new Uint8Array(expected);
  let filled = 0;
  const inflater = new Unzlib((chunk) => {
    if (chunk.length > expected - filled) throw new ImageError(`the PNG's image data inflates to more than its ${width}×${height} pixels need (${expected} bytes)`);
    out.set(chunk, filled);
    filled += chunk.length;
  });
  try {
    for (const part of parts) {
      for (let from = 0; from < part.length; from += FEED_BYTES) inflater.push(part.subarray(from, from + FEED_BYTES));
    }
    inflater.push(new Uint8Array(0), true);
  } catch (error) {
    if (error instanceof ImageError) throw error;
    throw new ImageError(`the PNG's image data is not a valid zlib stream (${(error as Error).message})`);
  }
  if (filled < expected) throw new ImageError(`the PNG's image data holds ${filled} bytes; its ${width}×${height} pixels need ${expected}`);
  return out;
}

/** Undoes a row's filter in place; `previous` is the pass's row above (all zeros for its first). */
function unfilter(kind: number, row: Uint8Array, previous: Uint8Array | undefined, bpp: number): void {
  const n = row.length;
  switch (kind) {
    case 0:
      return;
    case 1:
      for (let i = bpp; i < n; i++) row[i] = (row[i]! + row[i - bpp]!) & 255;
      return;
    case 2:
      if (previous) for (let i = 0; i < n; i++) row[i] = (row[i]! + previous[i]!) & 255;
      return;
    case 3:
      for (let i = 0; i < n; i++) row[i] = (row[i]! + (((i >= bpp ? row[i - bpp]! : 0) + (previous ? previous[i]! : 0)) >> 1)) & 255;
      return;
    case 4:
      for (let i = 0; i < n; i++) {
        const a = i >= bpp ? row[i - bpp]! : 0;
        const b = previous ? previous[i]! : 0;
        const c = i >= bpp && previous ? previous[i - bpp]! : 0;
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        row[i] = (row[i]! + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c)) & 255;
      }
      return;
    default:
      throw new ImageError(`the PNG has a row with unknown filter type ${kind}`);
  }
}

/** The unfiltered samples as 8-bit RGB over white. */
function toRgb(raw: Uint8Array, header: Header, palette: Uint8Array | undefined, transparency: Uint8Array | undefined): RgbImage {
  const { width, height, depth, colorType, channels } = header;
  const rgb = new Uint8Array(width * height * 3);
  const bpp = Math.max(1, (channels * depth) >> 3);
  const max = (1 << depth) - 1;
  const entries = palette ? palette.length / 3 : 0;
  // A colour key (tRNS of a greyscale or RGB image): pixels of exactly that value are transparent.
  const key = transparency && colorType !== 3 ? Array.from({ length: transparency.length / 2 }, (_, i) => (transparency[2 * i]! << 8) | transparency[2 * i + 1]!) : undefined;
  // One sample of a row at sample index i, at the image's depth (16-bit samples whole).
  const sample = (row: Uint8Array, i: number): number => {
    if (depth === 8) return row[i]!;
    if (depth === 16) return (row[2 * i]! << 8) | row[2 * i + 1]!;
    const bit = i * depth;
    return (row[bit >> 3]! >> (8 - depth - (bit & 7))) & max;
  };
  const to8 = depth === 16 ? (v: number) => v >> 8 : depth === 8 ? (v: number) => v : (v: number) => Math.round((v * 255) / max);
  let offset = 0;
  for (const pass of passes(header)) {
    let previous: Uint8Array | undefined;
    for (let y = 0; y < pass.height; y++) {
      const filter = raw[offset]!;
      const row = raw.subarray(offset + 1, offset + 1 + pass.rowBytes);
      offset += 1 + pass.rowBytes;
      unfilter(filter, row, previous, bpp);
      previous = row;
      let out = ((pass.y0 + y * pass.dy) * width + pass.x0) * 3;
      const step = pass.dx * 3;
      for (let x = 0; x < pass.width; x++, out += step) {
        let r: number, g: number, b: number;
        let alpha = 255;
        if (colorType === 3) {
          const index = sample(row, x);
          if (index >= entries) throw new ImageError(`the PNG's pixel (${pass.x0 + x * pass.dx}, ${pass.y0 + y * pass.dy}) uses palette entry ${index} of ${entries}`);
          [r, g, b] = [palette![3 * index]!, palette![3 * index + 1]!, palette![3 * index + 2]!];
          if (transparency && index < transparency.length) alpha = transparency[index]!;
        } else if (channels < 3) {
          const v = sample(row, x * channels);
          r = g = b = to8(v);
          if (channels === 2) alpha = to8(sample(row, x * 2 + 1));
          else if (key && v === key[0]) alpha = 0;
        } else {
          const [vr, vg, vb] = [sample(row, x * channels), sample(row, x * channels + 1), sample(row, x * channels + 2)];
          [r, g, b] = [to8(vr), to8(vg), to8(vb)];
          if (channels === 4) alpha = to8(sample(row, x * 4 + 3));
          else if (key && vr === key[0] && vg === key[1] && vb === key[2]) alpha = 0;
        }
        if (alpha === 255) {
          rgb[out] = r;
          rgb[out + 1] = g;
          rgb[out + 2] = b;
        } else {
          const a = alpha / 255;
          rgb[out] = Math.round(r * a + 255 * (1 - a));
          rgb[out + 1] = Math.round(g * a + 255 * (1 - a));
          rgb[out + 2] = Math.round(b * a + 255 * (1 - a));
        }
      }
    }
  }
  return { width, height, data: rgb };
}
