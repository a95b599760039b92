/**
 * The baseline of issue 11's first target: the inference server a user writes by hand in an
 * afternoon with nothing but `node:http`. One onnxruntime-node session per model, created
 * in-process with default options; `session.run` once per request on the event loop; KServe v2
 * inference with JSON tensors or the binary tensor extension (JSON header, then each input's raw
 * bytes; outputs in binary when `binary_data_output` asks), decoded and encoded simply. No
 * framework, no queue, no batching, no worker thread, no metadata routes (the benchmark reads
 * metadata from tensorfn).
 *
 *   node --import tsx bench/suites/handwritten-server.ts [--repo functions] [--models simple,mlp] [--port 0] [--tensorfn-spin]
 *
 * `--tensorfn-spin` (a study, never the baseline): the sessions' intra-op threads spin as tensorfn's
 * do on the CPU (a short spin, then sleep) instead of onnxruntime's default, so that the two servers
 * differ only in what serves the request (docs/notes/2026-12-scheduling-studies.md, "mlp at one client: the spin policy").
 *
 * Prints `handwritten server at http://127.0.0.1:<port>` once listening.
 */
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import { parseArgs } from "node:util";
import * as ort from "onnxruntime-node";
import { intraOpSpinning } from "../../runtime/backends/_ort-session.ts";

interface InputHeader {
  name: string;
  datatype: string;
  shape: number[];
  data?: number[];
  parameters?: { binary_data_size?: number };
}

const TYPES: Record<string, { ort: "float32" | "int32" | "int64" | "uint8" | "bool"; array: typeof Float32Array | typeof Int32Array | typeof BigInt64Array | typeof Uint8Array }> = {
  FP32: { ort: "float32", array: Float32Array },
  INT32: { ort: "int32", array: Int32Array },
  INT64: { ort: "int64", array: BigInt64Array },
  UINT8: { ort: "uint8", array: Uint8Array },
  BOOL: { ort: "bool", array: Uint8Array },
};
const KSERVE: Record<string, string> = { float32: "FP32", int32: "INT32", int64: "INT64", uint8: "UINT8", bool: "BOOL" };

const { values } = parseArgs({
  options: {
    repo: { type: "string", default: "functions" },
    models: { type: "string", default: "simple,mlp" },
    port: { type: "string", default: "0" },
    "tensorfn-spin": { type: "boolean", default: false },
  },
});

const sessions = new Map<string, ort.InferenceSession>();
for (const name of values.models!.split(",")) {
  const options = values["tensorfn-spin"] ? { extra: { session: { intra_op: intraOpSpinning({ provider: "cpu" }) } } } : {};
  sessions.set(name, await ort.InferenceSession.create(join(values.repo!, name, "1", "model.onnx"), options));
}

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () => {
    infer(request, Buffer.concat(chunks)).then(
      ({ body, headers }) => {
        response.writeHead(200, { ...headers, "content-length": body.length });
        response.end(body);
      },
      (error: unknown) => answerError(response, error),
    );
  });
});

async function infer(request: IncomingMessage, body: Buffer): Promise<{ body: Buffer; headers: Record<string, string> }> {
  const match = /^\/v2\/models\/([^/]+)\/infer$/.exec(request.url ?? "");
  const session = match && request.method === "POST" ? sessions.get(match[1]!) : undefined;
  if (!session) throw Object.assign(new Error(`no such route: ${request.method} ${request.url}`), { status: 404 });
  const headerLength = request.headers["inference-header-content-length"];
  const jsonEnd = headerLength === undefined ? body.length : Number(headerLength);
  const header = JSON.parse(body.toString("utf8", 0, jsonEnd)) as { inputs: InputHeader[]; parameters?: { binary_data_output?: boolean } };
  const feeds: Record<string, ort.Tensor> = {};
  let offset = jsonEnd;
  for (const input of header.inputs) {
    const type = TYPES[input.datatype]!;
    const size = input.parameters?.binary_data_size;
    let data;
    if (size !== undefined) {
      // Copy the bytes so the typed array starts on an aligned offset.
      const bytes = new Uint8Array(body.subarray(offset, offset + size));
      offset += size;
      data = new type.array(bytes.buffer, 0, size / type.array.BYTES_PER_ELEMENT);
    } else {
      data = type.array === BigInt64Array ? BigInt64Array.from(input.data!, (v) => BigInt(v)) : (type.array as typeof Float32Array).from(input.data!);
    }
    feeds[input.name] = new ort.Tensor(type.ort, data as Float32Array, input.shape);
  }
  const results = await session.run(feeds);
  const outputs = Object.entries(results).map(([name, tensor]) => ({ name, datatype: KSERVE[tensor.type]!, shape: [...tensor.dims], data: tensor.data as Float32Array }));
  const modelName = match![1]!;
  if (!header.parameters?.binary_data_output) {
    const json = { model_name: modelName, outputs: outputs.map((o) => ({ name: o.name, datatype: o.datatype, shape: o.shape, data: Array.from(o.data, Number) })) };
    return { body: Buffer.from(JSON.stringify(json)), headers: { "content-type": "application/json" } };
  }
  const json = Buffer.from(
    JSON.stringify({
      model_name: modelName,
      outputs: outputs.map(({ name, datatype, shape, data }) => ({ name, datatype, shape, parameters: { binary_data_size: data.byteLength } })),
    }),
  );
  const tensors = outputs.map((o) => Buffer.from(o.data.buffer, o.data.byteOffset, o.data.byteLength));
  return { body: Buffer.concat([json, ...tensors]), headers: { "content-type": "application/octet-stream", "inference-header-content-length": String(json.length) } };
}

function answerError(response: ServerResponse, error: unknown): void {
  const status = (error as { status?: number }).status ?? 400;
  const body = Buffer.from(JSON.stringify({ error: error instanceof Error ? error.message : String(error) }));
  response.writeHead(status, { "content-type": "application/json", "content-length": body.length });
  response.end(body);
}

server.listen(Number(values.port), "127.0.0.1", () => {
  const address = server.address();
  console.log(`handwritten server at http://127.0.0.1:${typeof address === "object" && address ? address.port : values.port}`);
});
process.once("SIGTERM", () => process.exit(0));
