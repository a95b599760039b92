import { deflateSync } from "node:zlib";

// PNGs built chunk by chunk, so tests can send what no encoder writes: lying headers, bad
// palettes, chunks a decoder need not read, every bit depth.

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

/** One PNG chunk: length, type, data, CRC. */
export function chunk(type: string, data: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  out.set(new TextEncoder().encode(type), 4);
  out.set(data, 8);
  let crc = 0xffffffff;
  for (const byte of out.subarray(4, 8 + data.length)) crc = CRC_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  view.setUint32(8 + data.length, (crc ^ 0xffffffff) >>> 0);
  return out;
}

/** An IHDR chunk. */
export function ihdr(width: number, height: number, depth: number, colorType: number, interlace = 0): Uint8Array<ArrayBuffer> {
  const data = new Uint8Array(13);
  new DataView(data.buffer).setUint32(0, width);
  new DataView(data.buffer).setUint32(4, height);
  data.set([depth, colorType, 0, 0, interlace], 8);
  return chunk("IHDR", data);
}

/** A PNG of these chunks between the signature and IEND. */
export function png(...chunks: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const parts = [new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10]), ...chunks, chunk("IEND", new Uint8Array())];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Rows of packed samples (each row a filter byte 0 and its bytes), deflated: one IDAT. */
export function idat(rows: number[][]): Uint8Array<ArrayBuffer> {
  return chunk("IDAT", new Uint8Array(deflateSync(Uint8Array.from(rows.flatMap((r) => [0, ...r])))));
}

/** Samples of `depth` bits packed MSB first into bytes, one row. */
export function pack(samples: number[], depth: number): number[] {
  if (depth === 8) return samples;
  if (depth === 16) return samples.flatMap((s) => [s >> 8, s & 255]);
  const bytes = new Array<number>(Math.ceil((samples.length * depth) / 8)).fill(0);
  samples.forEach((s, i) => (bytes[(i * depth) >> 3]! |= s << (8 - depth - ((i * depth) & 7))));
  return bytes;
}

