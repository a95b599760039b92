/**
 * `npm run bench:ocr-limits`: what the OCR example's input limits protect against, measured in this
 * process on this machine — a PNG decompression bomb (refused, and what it would have cost), the
 * largest image `max_pixels` admits (decode on the event loop), the box step on the detector maps
 * an image could draw at its worst, and the detector at the size the handlers send against the
 * size a direct caller could ask for without `max_input_elements`.
 * Writes bench/results/ocr-limits.md.
 *
 *   npm run bench:ocr-limits
 */
import { deflateSync } from "node:zlib";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as ort from "onnxruntime-node";
import { decode, encode } from "fast-png";
import { decodeImage, findBoxes } from "../../functions/ocr/ppocr.ts";
import { writeResultsSection } from "./results-section.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const log = (line: string) => void process.stderr.write(`${line}\n`);

/** Time and peak RSS growth of `run`, sampled every 2 ms (the event loop is busy meanwhile, so also after). */
async function measure(run: () => unknown | Promise<unknown>): Promise<{ ms: number; mib: number; error?: string }> {
  const before = process.memoryUsage().rss;
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 2);
  const started = performance.now();
  let error: string | undefined;
  try {
    await run();
  } catch (e) {
    error = (e as Error).message;
  }
  const ms = performance.now() - started;
  clearInterval(timer);
  peak = Math.max(peak, process.memoryUsage().rss);
  return { ms, mib: (peak - before) / 2 ** 20, error };
}

/** A valid PNG whose header says 1×1 and whose data inflates to `mib` MiB of zeros. */
function bomb(mib: number): Uint8Array {
  const valid = encode({ width: 1, height: 1, data: new Uint8Array(3), channels: 3, depth: 8 });
  // Keep the signature and IHDR (33 bytes), replace IDAT: length, type, data, a CRC fast-png checks only if asked.
  const idat = deflateSync(new Uint8Array(mib << 20), { level: 9 });
  const chunk = new Uint8Array(12 + idat.length);
  const view = new DataView(chunk.buffer);
  view.setUint32(0, idat.length);
  chunk.set(new TextEncoder().encode("IDAT"), 4);
  chunk.set(idat, 8);
  const iend = valid.slice(valid.length - 12);
  return new Uint8Array([...valid.slice(0, 33), ...chunk, ...iend]);
}

const rows: string[] = [];
const b = bomb(200);
const refused = await measure(() => decodeImage(b));
const unguarded = await measure(() => decode(b));
rows.push(`| a ${(b.length / 1024).toFixed(0)} kB PNG declaring 1×1 that inflates to 200 MiB | decodeImage (the OCR handlers): ${refused.error ? "refused" : "decoded"} in ${refused.ms.toFixed(0)} ms, +${refused.mib.toFixed(0)} MiB | fast-png alone: ${unguarded.ms.toFixed(0)} ms, +${unguarded.mib.toFixed(0)} MiB |`);
log(rows.at(-1)!);

const side = 2048;
const pixels = new Uint8Array(side * side * 3);
for (let i = 0; i < pixels.length; i++) pixels[i] = (i * 2654435761) >>> 24;
const big = encode({ width: side, height: side, data: pixels, channels: 3, depth: 8 });
const decodes = [];
for (let i = 0; i < 3; i++) decodes.push(await measure(() => decodeImage(big)));
rows.push(`| the largest image max_pixels admits (${side}×${side}, ${(big.length / 2 ** 20).toFixed(1)} MiB PNG) | decodeImage, 3 runs: ${decodes.map((d) => d.ms.toFixed(0)).join(" / ")} ms on the event loop, +${Math.max(...decodes.map((d) => d.mib)).toFixed(0)} MiB at most | |`);
log(rows.at(-1)!);

// The box step (findBoxes, on the event loop) on 960 × 960 maps, the largest the handlers make:
// each region costs geometry, so the worst maps are many regions or one huge one.
const map = 960;
const hostileMaps: [string, (x: number, y: number) => boolean][] = [
  ["460 800 one-pixel specks (a checkerboard)", (x, y) => (x + y) % 2 === 0],
  ["57 600 separate 3 × 3 blocks", (x, y) => x % 4 !== 3 && y % 4 !== 3],
  ["57 600 separate 3 × 3 plus signs (not rectangles: each takes the hull and calipers)", (x, y) => (x % 4 !== 3 && y % 4 !== 3) && !((x % 4 === 0 || x % 4 === 2) && (y % 4 === 0 || y % 4 === 2))],
  ["one disc of 694 000 pixels", (x, y) => (x - 480) ** 2 + (y - 480) ** 2 < 470 ** 2],
];
for (const [what, ink] of hostileMaps) {
  const prob = new Float32Array(map * map);
  for (let y = 0; y < map; y++) for (let x = 0; x < map; x++) if (ink(x, y)) prob[y * map + x] = 0.9;
  const runs = [];
  for (let i = 0; i < 3; i++) runs.push(await measure(() => findBoxes(prob, map, map, { width: map, height: map })));
  rows.push(`| a ${map}×${map} detector map of ${what} | findBoxes, 3 runs: ${runs.map((r) => r.ms.toFixed(0)).join(" / ")} ms on the event loop, +${Math.max(...runs.map((r) => r.mib)).toFixed(0)} MiB at most | |`);
  log(rows.at(-1)!);
}

const det = await ort.InferenceSession.create(join(ROOT, "functions", "ocr_det", "1", "model.onnx"), { intraOpNumThreads: 2, interOpNumThreads: 1 });
for (const s of [960, 2304]) {
  const x = new ort.Tensor("float32", new Float32Array(3 * s * s).fill(0.1), [1, 3, s, s]);
  const run = await measure(() => det.run({ x }));
  rows.push(`| ocr_det on [1, 3, ${s}, ${s}] (${((3 * s * s * 4) / 2 ** 20).toFixed(0)} MiB of input)${s === 960 ? ": the most the OCR handlers send" : ": what one request under --max-elements could ask without max_input_elements"} | ${run.ms.toFixed(0)} ms, +${run.mib.toFixed(0)} MiB | |`);
  log(rows.at(-1)!);
}
await det.release();

writeResultsSection(
  "ocr-limits",
  [
    "## OCR example: what its input limits protect against",
    "",
    "Generated by `npm run bench:ocr-limits` (bench/suites/ocr-limits.ts); rerun to refresh. In one process, on this machine: time and",
    "peak RSS growth (sampled every 2 ms) of each step alone.",
    "",
    `- Date: ${new Date().toISOString()}`,
    "",
    "| input | cost | without the guard |",
    "|---|---|---|",
    ...rows,
    "",
  ].join("\n"),
);
log("bench:ocr-limits: wrote bench/results/ocr-limits.md");
