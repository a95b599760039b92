import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encode } from "fast-png";
import { drawPage, rotate, rotate180 } from "../../models/text-image.ts";
import { encodeBinaryTensor } from "../../runtime/tensor/mod.ts";
import type { RgbImage } from "../../models/text-image.ts";
import { startServer } from "../../harness/start-server.ts";
import { chunk, idat, ihdr, pack, png as pngOf } from "../../harness/png-chunks.ts";
import { deflateSync } from "node:zlib";
import type { TestServer } from "../../harness/start-server.ts";

// The OCR example end to end: a PNG drawn here with the bitmap font, read back by the pretrained
// PP-OCR detector, angle classifier and recogniser, each through its own function.
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
}, 60_000);
afterAll(() => server.close());

const png = (image: RgbImage) => new Uint8Array(encode({ width: image.width, height: image.height, data: image.data, channels: 3, depth: 8 }));
// Scale 3 with a printed word gap: the layout the models read exactly (see bench/suites/ocr.ts).
const page = (lines: string[]) => drawPage(lines, { scale: 3, margin: 32, lineGap: 12, spaceWidth: 2 });

interface Line {
  text: string;
  confidence: number;
  box: number[][];
  angle: number;
}

async function ocr(body: Uint8Array<ArrayBuffer> | string, type = "image/png") {
  const response = await fetch(`${server.url}/v1/functions/ocr`, { method: "POST", body, headers: { "content-type": type } });
  return { status: response.status, json: (await response.json()) as { width: number; height: number; lines: Line[]; error?: string } };
}

describe("functions/ocr: PNG in, lines of text out", () => {
  it("reads a rendered line exactly, with its box and confidence", { timeout: 60_000 }, async () => {
    const image = page(["PRICE 42"]);
    const { status, json } = await ocr(png(image));
    expect(status).toBe(200);
    expect(json).toMatchObject({ width: image.width, height: image.height });
    expect(json.lines.map((l) => [l.text, l.angle])).toEqual([["PRICE 42", 0]]);
    const [line] = json.lines;
    expect(line!.confidence).toBeGreaterThan(0.9);
    // The text is drawn at (32, 32), 21 pixels high; the box surrounds it, a few pixels out.
    const [[x0, y0], , [x1, y1]] = line!.box as [[number, number], unknown, [number, number]];
    expect(x0).toBeGreaterThan(20);
    expect(x0).toBeLessThanOrEqual(32);
    expect(y0).toBeGreaterThan(20);
    expect(y0).toBeLessThanOrEqual(32);
    expect(x1).toBeGreaterThanOrEqual(image.width - 32);
    expect(y1).toBeGreaterThanOrEqual(32 + 21);
  });

  it("reads an upside-down image: the classifier turns each line, and the page reads top to bottom", { timeout: 60_000 }, async () => {
    const one = await ocr(png(rotate180(page(["PRICE 42"]))));
    expect(one.json.lines.map((l) => [l.text, l.angle])).toEqual([["PRICE 42", 180]]);
    const three = await ocr(png(rotate180(page(["PRICE 42", "HELLO WORLD", "BATCH 17"]))));
    expect(three.json.lines.map((l) => l.text)).toEqual(["PRICE 42", "HELLO WORLD", "BATCH 17"]);
  });

  it("reads a page turned by 30 degrees either way, and by a quarter either way: boxes at the text's angle, lines in page order", { timeout: 60_000 }, async () => {
    const lines = ["PRICE 42", "HELLO WORLD", "BATCH 17"];
    for (const degrees of [30, -30]) {
      const { json } = await ocr(png(rotate(page(lines), degrees)));
      expect(json.lines.map((l) => [l.text, l.angle])).toEqual(lines.map((t) => [t, 0]));
      // The first line's box runs along its text at the page's angle (y grows downwards).
      const [p0, p1] = json.lines[0]!.box as [number, number][];
      expect(Math.abs((Math.atan2(p0[1]! - p1[1]!, p1[0]! - p0[0]!) * 180) / Math.PI - degrees)).toBeLessThan(3);
    }
    // A quarter clockwise reads top to bottom as it is; a quarter the other way reads once turned.
    const clockwise = await ocr(png(rotate(page(lines), -90)));
    expect(clockwise.json.lines.map((l) => [l.text, l.angle])).toEqual(lines.map((t) => [t, 0]));
    const anticlockwise = await ocr(png(rotate(page(lines), 90)));
    expect(anticlockwise.json.lines.map((l) => [l.text, l.angle])).toEqual(lines.map((t) => [t, 180]));
  });

  it("reads several lines top to bottom; JSON with a base64 image works as the raw body does", { timeout: 60_000 }, async () => {
    const bytes = png(page(["PRICE 42", "HELLO WORLD", "BATCH 17"]));
    const raw = await ocr(bytes);
    expect(raw.json.lines.map((l) => l.text)).toEqual(["PRICE 42", "HELLO WORLD", "BATCH 17"]);
    const json = await ocr(JSON.stringify({ image: btoa(String.fromCharCode(...bytes)) }), "application/json");
    expect(json).toEqual(raw);
  });

  it("answers a blank image with no lines, without running the classifier or the recogniser", { timeout: 60_000 }, async () => {
    const before = await inferences("ocr_rec");
    const blank = { width: 64, height: 64, data: new Uint8Array(64 * 64 * 3).fill(255) };
    const { status, json } = await ocr(png(blank));
    expect({ status, lines: json.lines }).toEqual({ status: 200, lines: [] });
    expect(await inferences("ocr_rec")).toBe(before);
  });

  it("refuses what is not a PNG (400) and a PNG that declares too many pixels (413), before decoding it", async () => {
    expect(await ocr("hello", "text/plain")).toEqual({ status: 400, json: { error: "function 'ocr' execute: the image is not a PNG" } });
    expect((await ocr(JSON.stringify({ picture: 1 }), "application/json")).json.error).toMatch(/send a PNG/);
    expect((await ocr(JSON.stringify({ image: "!!" }), "application/json")).json.error).toMatch(/image is not base64/);
    // A valid 1×1 PNG whose header then claims 100 000 × 100 000: refused from the header alone.
    const bomb = png({ width: 1, height: 1, data: new Uint8Array([255, 255, 255]) });
    new DataView(bomb.buffer).setUint32(16, 100_000);
    new DataView(bomb.buffer).setUint32(20, 100_000);
    const refused = await ocr(bomb);
    expect(refused.status).toBe(413);
    expect(refused.json.error).toMatch(/100000×100000 pixels; at most 4194304/);
    const truncated = png(page(["PRICE 42"])).slice(0, 60);
    expect((await ocr(truncated)).status).toBe(400);
  });

  it("decodes untrusted PNGs within a budget: a colour profile that inflates to 256 MB is skipped unread, lying headers and palettes are 400s naming the fault", { timeout: 60_000 }, async () => {
    const rows = Array.from({ length: 16 }, () => Array(16).fill(255));
    const zeros = new Uint8Array(deflateSync(new Uint8Array(256 << 20), { level: 9 }));
    const profile = new Uint8Array([...new TextEncoder().encode("icc"), 0, 0, ...zeros]);
    const bomb = pngOf(ihdr(16, 16, 8, 0), chunk("iCCP", profile), idat(rows));
    const started = performance.now();
    const [answered, beside] = await Promise.all([ocr(bomb), ocr(png({ width: 64, height: 64, data: new Uint8Array(64 * 64 * 3).fill(255) }))]);
    expect(performance.now() - started).toBeLessThan(2000); // a 2 MB one (2 GB inflated) took 16.9 s and 4.5 GB
    expect([answered.status, answered.json.lines, beside.status]).toEqual([200, [], 200]);
    const refusals = [
      [pngOf(ihdr(16, 16, 255, 0), idat(rows)), "the PNG's bit depth 255 is not allowed for color type 0 (greyscale: 1, 2, 4, 8, 16)"],
      [pngOf(ihdr(1, 1, 8, 3), chunk("PLTE", new Uint8Array()), idat([[0]])), "the PNG's palette (PLTE) has 0 bytes: it must hold 1 to 256 RGB entries"],
      [pngOf(ihdr(2, 1, 8, 3), chunk("PLTE", new Uint8Array(3)), idat([[0, 9]])), "the PNG's pixel (1, 0) uses palette entry 9 of 1"],
      [pngOf(ihdr(1, 1, 16, 3), chunk("PLTE", new Uint8Array(3)), idat([[0, 0]])), "the PNG's bit depth 16 is not allowed for color type 3 (indexed: 1, 2, 4, 8)"],
    ] as const;
    for (const [bytes, message] of refusals) {
      expect(await ocr(bytes)).toEqual({ status: 400, json: { error: `function 'ocr' execute: ${message}` } });
      const steps = await ensemble(bytes);
      expect([steps.status, steps.json.error]).toEqual([400, `ensemble 'ocr_ensemble' step 0 ('ocr_prepare'): function 'ocr_prepare' compute: ${message}`]);
    }
  });

  it("reads a 1-bit greyscale page as it reads the same page in 8-bit RGB", { timeout: 60_000 }, async () => {
    const image = page(["PRICE 42"]);
    const bits = Array.from({ length: image.height }, (_, y) =>
      pack(Array.from({ length: image.width }, (_, x) => (image.data[(y * image.width + x) * 3]! >= 128 ? 1 : 0)), 1),
    );
    const oneBit = await ocr(pngOf(ihdr(image.width, image.height, 1, 0), idat(bits)));
    expect(oneBit.status).toBe(200);
    expect(oneBit.json.lines.map((l) => l.text)).toEqual((await ocr(png(image))).json.lines.map((l) => l.text));
    expect(oneBit.json.lines.map((l) => l.text)).toEqual(["PRICE 42"]);
  });

  it("batches the recogniser across concurrent requests: fewer executions than inferences", { timeout: 60_000 }, async () => {
    const before = await statistics("ocr_rec");
    const bytes = png(page(["PRICE 42", "HELLO WORLD"]));
    const answers = await Promise.all(Array.from({ length: 8 }, () => ocr(bytes)));
    for (const answer of answers) expect(answer.json.lines.map((l) => l.text)).toEqual(["PRICE 42", "HELLO WORLD"]);
    const after = await statistics("ocr_rec");
    expect(after.inference_count - before.inference_count).toBe(16); // two lines each
    // Each call's two lines reach ocr_rec as two requests of one (one per instance): an execution
    // of three or more rows held lines of different calls. Fewer executions than lines, too.
    const wide = (s: typeof before) => s.batch_stats.filter((b) => b.batch_size >= 3).reduce((n, b) => n + b.compute_infer.count, 0);
    expect(wide(after)).toBeGreaterThan(wide(before));
    expect(after.execution_count - before.execution_count).toBeLessThan(16);
  });

  it("answers tensor callers on the KServe route (BYTES body and content_type)", { timeout: 60_000 }, async () => {
    const answer = await inferBytes("ocr", { body: png(page(["PRICE 42"])), content_type: new TextEncoder().encode("image/png") });
    expect(JSON.parse(answer.output("body")!.data[0] as string).lines[0].text).toBe("PRICE 42");
  });
});

/** A KServe request whose inputs are one BYTES element each, sent as they are in the binary tensor extension. */
async function inferBytes(name: string, inputs: Record<string, Uint8Array>) {
  const sections = Object.values(inputs).map((bytes) => encodeBinaryTensor({ datatype: "BYTES", shape: [1], data: [bytes] }));
  const header = new TextEncoder().encode(JSON.stringify({ inputs: Object.keys(inputs).map((input, i) => ({ name: input, datatype: "BYTES", shape: [1], parameters: { binary_data_size: sections[i]!.length } })) }));
  const body = new Uint8Array(header.length + sections.reduce((n, s) => n + s.length, 0));
  [header, ...sections].reduce((at, part) => (body.set(part, at), at + part.length), 0);
  const response = await fetch(`${server.url}/v2/models/${name}/infer`, { method: "POST", body, headers: { "inference-header-content-length": String(header.length) } });
  const json = (await response.json()) as { outputs?: { name: string; shape: number[]; data: unknown[] }[]; error?: string };
  const output = (name: string) => json.outputs?.find((o) => o.name === name);
  return { status: response.status, json, output };
}

/** ocr_ensemble on one PNG. */
const ensemble = (bytes: Uint8Array) => inferBytes("ocr_ensemble", { image: bytes });

describe("functions/ocr_ensemble: the same chain as an ensemble over KServe", () => {
  it("reads the page as the function does: text, confidence, box and angle as tensors", { timeout: 60_000 }, async () => {
    const bytes = png(page(["PRICE 42", "HELLO WORLD", "BATCH 17"]));
    const [viaEnsemble, viaFunction] = await Promise.all([ensemble(bytes), ocr(bytes)]);
    expect(viaEnsemble.status).toBe(200);
    expect(viaEnsemble.output("text")!.data).toEqual(["PRICE 42", "HELLO WORLD", "BATCH 17"]);
    expect(viaEnsemble.output("box")).toMatchObject({ shape: [3, 4, 2], data: viaFunction.json.lines.flatMap((l) => l.box.flat()) });
    expect(viaEnsemble.output("angle")!.data).toEqual([0, 0, 0]);
    (viaEnsemble.output("confidence")!.data as number[]).forEach((c, i) => expect(c).toBeCloseTo(viaFunction.json.lines[i]!.confidence, 5));
    const turned = await ensemble(png(rotate180(page(["PRICE 42"]))));
    expect([turned.output("text")!.data, turned.output("angle")!.data]).toEqual([["PRICE 42"], [180]]);
    const tilted = await ensemble(png(rotate(page(["PRICE 42", "HELLO WORLD"]), 30)));
    expect([tilted.output("text")!.data, tilted.output("angle")!.data]).toEqual([["PRICE 42", "HELLO WORLD"], [0, 0]]);
  });

  it("ends early on an image without text: the classifier and recogniser never run, the answer has no text", { timeout: 60_000 }, async () => {
    const before = [await inferences("ocr_cls"), await inferences("ocr_rec"), await inferences("ocr_boxes")];
    const { status, json } = await ensemble(png({ width: 64, height: 64, data: new Uint8Array(64 * 64 * 3).fill(255) }));
    expect({ status, outputs: json.outputs }).toEqual({ status: 200, outputs: [] });
    expect([await inferences("ocr_cls"), await inferences("ocr_rec"), await inferences("ocr_boxes")]).toEqual([before[0], before[1], before[2]! + 1]);
  });

  it("its steps refuse what would cost far more than the request, when called directly", async () => {
    const call = async (name: string, inputs: unknown[]) => {
      const response = await fetch(`${server.url}/v2/models/${name}/infer`, { method: "POST", body: JSON.stringify({ inputs }) });
      return { status: response.status, error: ((await response.json()) as { error?: string }).error };
    };
    const pixels = { name: "pixels", datatype: "UINT8", shape: [2, 2, 3], data: Array(12).fill(255) };
    // 5,000 boxes (100 kB of JSON) would ask for ~0.9 GB of recogniser input.
    const boxes = (n: number) => ({ name: "boxes", datatype: "FP32", shape: [n, 9], data: Array(n * 9).fill(1) });
    const probs = (n: number) => ({ name: "angle_probs", datatype: "FP32", shape: [n, 2], data: Array(n * 2).fill(0.5) });
    expect(await call("ocr_lines", [pixels, boxes(5000), probs(5000)])).toEqual({ status: 400, error: "function 'ocr_lines' compute: boxes has 5000 rows; at most 16 lines are read per image" });
    expect(await call("ocr_lines", [pixels, boxes(2), probs(3)])).toEqual({ status: 400, error: "function 'ocr_lines' compute: angle_probs has 3 rows for 2 boxes" });
    const decode = [
      { name: "classes", datatype: "INT64", shape: [1, 4], data: [0, 1, 2, 3] },
      { name: "scores", datatype: "FP32", shape: [1, 4], data: [1, 1, 1, 1] },
      boxes(2),
      { name: "turned", datatype: "BOOL", shape: [2], data: [false, false] },
    ];
    expect(await call("ocr_decode", decode)).toEqual({ status: 400, error: "function 'ocr_decode' compute: classes has 1 rows for 2 boxes" });
    // The models' free dims are bounded by their max_input_elements, before any data is decoded.
    const huge = await call("ocr_det", [{ name: "x", datatype: "FP32", shape: [1, 3, 2048, 2048], data: [0] }]);
    expect(huge.status).toBe(413);
    expect(huge.error).toMatch(/more than the limit of 3145728 \(max_input_elements of 'ocr_det'\)$/);
    const wide = await call("ocr_rec", [{ name: "x", datatype: "FP32", shape: [1, 3, 48, 100_000], data: [0] }]);
    expect(wide.error).toMatch(/\(max_input_elements of 'ocr_rec'\)$/);
  });

  it("refuses what is not a PNG with 400 naming the step", async () => {
    const { status, json } = await ensemble(new TextEncoder().encode("not a png"));
    expect(status).toBe(400);
    expect(json.error).toBe("ensemble 'ocr_ensemble' step 0 ('ocr_prepare'): function 'ocr_prepare' compute: the image is not a PNG");
  });
});

async function statistics(name: string): Promise<{ inference_count: number; execution_count: number; batch_stats: { batch_size: number; compute_infer: { count: number } }[] }> {
  const response = await fetch(`${server.url}/v2/models/${name}/stats`);
  return (await response.json()).model_stats[0];
}

async function inferences(name: string): Promise<number> {
  const response = await fetch(`${server.url}/v2/models/${name}/stats`);
  const stats = (await response.json()).model_stats as { inference_count: number }[];
  return stats.reduce((n, s) => n + s.inference_count, 0);
}
