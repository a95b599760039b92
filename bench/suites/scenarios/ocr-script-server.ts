/**
 * The OCR pipeline as a user would write it by hand: plain node:http, the three PP-OCR
 * onnxruntime sessions created once, and for each request the same steps as functions/ocr
 * (functions/ocr/ppocr.ts) calling the sessions one after another on this thread. The baseline
 * bench/suites/ocr.ts measures tensorfn's `ocr` function against.
 *
 *   node --import tsx bench/suites/scenarios/ocr-script-server.ts [--port 0]
 */
import { createServer } from "node:http";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import * as ort from "onnxruntime-node";
import { ImageError, parseDictionary, readText } from "../../../functions/ocr/ppocr.ts";
import type { Tensor } from "../../../runtime/mod.ts";

const { values } = parseArgs({ options: { port: { type: "string", default: "0" } } });
const FUNCTIONS = join(resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", ".."), "functions");
const dictionary = parseDictionary(readFileSync(join(FUNCTIONS, "ocr", "ppocr_keys_v1.txt")));
const sessions: Record<string, ort.InferenceSession> = {};
for (const name of ["ocr_det", "ocr_cls", "ocr_rec"]) sessions[name] = await ort.InferenceSession.create(join(FUNCTIONS, name, "1", "model.onnx"));

// The outputs readText reads, as a script fetches them (the recogniser's softmax is never copied out).
async function run(name: string, inputs: Record<string, Tensor>, fetch?: readonly string[]): Promise<Record<string, Tensor>> {
  const feeds = Object.fromEntries(Object.entries(inputs).map(([k, t]) => [k, new ort.Tensor("float32", t.data as Float32Array, t.shape)]));
  const outputs = await (fetch ? sessions[name]!.run(feeds, fetch) : sessions[name]!.run(feeds));
  return Object.fromEntries(Object.entries(outputs).map(([k, t]) => [k, { datatype: t.type === "int64" ? "INT64" : "FP32", shape: [...t.dims], data: t.data as Float32Array | BigInt64Array }]));
}

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", async () => {
    try {
      const result = await readText(new Uint8Array(Buffer.concat(chunks)), run, dictionary);
      const body = JSON.stringify(result);
      response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      response.end(body);
    } catch (error) {
      response.writeHead(error instanceof ImageError ? error.status : 500, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: (error as Error).message }));
    }
  });
});
server.listen(Number(values.port), "127.0.0.1", () => {
  const address = server.address();
  console.log(`ocr script server at http://127.0.0.1:${typeof address === "object" && address ? address.port : values.port}`);
});
