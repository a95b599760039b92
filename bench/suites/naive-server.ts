/**
 * The baseline for bench/suites/scenarios.ts: the inference server a user would write by hand in an
 * afternoon. A Hono app on @hono/node-server, one onnxruntime-node session per model created with
 * default options, and `session.run` once per request: no queue, no batching, no worker thread.
 * It speaks just enough KServe v2 for the load generator: model metadata, and inference with JSON
 * tensors or the binary tensor extension (JSON header, then each input's raw bytes).
 *
 *   node --import tsx bench/suites/naive-server.ts [--repo functions] [--models mlp,resnet] [--port 8000]
 *
 * Prints `naive server at http://127.0.0.1:<port>` once listening. Two extra routes, `_noop` and
 * `_echo`, answer 256 fixed bytes without and with reading the body, to measure the framework alone.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import * as ort from "onnxruntime-node";

type OrtData = Float32Array | Int32Array | BigInt64Array | Uint8Array;

interface InputHeader {
  name: string;
  datatype: string;
  shape: number[];
  data?: (number | boolean)[];
  parameters?: { binary_data_size?: number };
}

interface RequestHeader {
  inputs: InputHeader[];
  parameters?: { binary_data_output?: boolean };
}

const KSERVE_TYPES: Record<string, string> = { float32: "FP32", int32: "INT32", int64: "INT64", uint8: "UINT8", bool: "BOOL" };
const ORT_TYPES: Record<string, keyof typeof ARRAYS> = { FP32: "float32", INT32: "int32", INT64: "int64", UINT8: "uint8", BOOL: "bool" };
const ARRAYS = { float32: Float32Array, int32: Int32Array, int64: BigInt64Array, uint8: Uint8Array, bool: Uint8Array };

const { values } = parseArgs({
  options: {
    repo: { type: "string", default: "functions" },
    models: { type: "string", default: "mlp,resnet" },
    port: { type: "string", default: "8000" },
  },
});

const sessions = new Map<string, ort.InferenceSession>();
for (const name of values.models!.split(",")) {
  sessions.set(name, await ort.InferenceSession.create(join(values.repo!, name, "1", "model.onnx")));
}

const app = new Hono();

app.get("/v2/models/:m", (c) => {
  const session = sessions.get(c.req.param("m"));
  if (!session) return c.json({ error: "unknown model" }, 404);
  const describe = (meta: readonly ort.InferenceSession.ValueMetadata[]) =>
    meta.map((m) => ({
      name: m.name,
      datatype: m.isTensor ? KSERVE_TYPES[m.type] : "BYTES",
      shape: m.isTensor ? m.shape.map((d) => (typeof d === "number" ? d : -1)) : [],
    }));
  return c.json({ name: c.req.param("m"), versions: ["1"], platform: "onnxruntime_onnx", inputs: describe(session.inputMetadata), outputs: describe(session.outputMetadata) });
});

// Two probes for bench/suites/scenarios.ts that locate the cost of the HTTP layer: the same framework path
// with and without reading the request body, no model either way.
const probeAnswer = new Uint8Array(256);
app.post("/v2/models/_noop/infer", () => new Response(probeAnswer, { headers: { "content-type": "application/octet-stream" } }));
app.post("/v2/models/_echo/infer", async (c) => {
  await c.req.arrayBuffer();
  return new Response(probeAnswer, { headers: { "content-type": "application/octet-stream" } });
});

app.post("/v2/models/:m/infer", async (c) => {
  const session = sessions.get(c.req.param("m"));
  if (!session) return c.json({ error: "unknown model" }, 404);
  const body = new Uint8Array(await c.req.arrayBuffer());
  const headerLength = c.req.header("inference-header-content-length");
  const jsonEnd = headerLength === undefined ? body.length : Number(headerLength);
  const request = JSON.parse(new TextDecoder().decode(body.subarray(0, jsonEnd))) as RequestHeader;
  const feeds: Record<string, ort.Tensor> = {};
  let offset = jsonEnd;
  for (const input of request.inputs) {
    const type = ORT_TYPES[input.datatype]!;
    const size = input.parameters?.binary_data_size;
    let data: OrtData;
    if (size !== undefined) {
      const bytes = body.slice(offset, offset + size);
      offset += size;
      data = new ARRAYS[type](bytes.buffer, 0, size / ARRAYS[type].BYTES_PER_ELEMENT);
    } else {
      data = type === "int64" ? BigInt64Array.from(input.data!.map((v) => BigInt(v as number))) : ARRAYS[type].from(input.data!.map(Number));
    }
    feeds[input.name] = new ort.Tensor(type, data, input.shape);
  }
  const results = await session.run(feeds);
  const outputs = Object.entries(results).map(([name, tensor]) => ({ name, datatype: KSERVE_TYPES[tensor.type]!, shape: [...tensor.dims], data: tensor.data as OrtData }));
  if (!request.parameters?.binary_data_output) {
    return c.json({ model_name: c.req.param("m"), outputs: outputs.map((o) => ({ ...o, data: Array.from(o.data, Number) })) });
  }
  const header = new TextEncoder().encode(
    JSON.stringify({
      model_name: c.req.param("m"),
      outputs: outputs.map(({ name, datatype, shape, data }) => ({ name, datatype, shape, parameters: { binary_data_size: data.byteLength } })),
    }),
  );
  const chunks = [header, ...outputs.map((o) => new Uint8Array(o.data.buffer, o.data.byteOffset, o.data.byteLength))];
  return new Response(Buffer.concat(chunks), {
    headers: { "content-type": "application/octet-stream", "inference-header-content-length": String(header.length) },
  });
});

serve({ fetch: app.fetch, hostname: "127.0.0.1", port: Number(values.port) }, (info) => {
  console.log(`naive server at http://127.0.0.1:${info.port}`);
});
process.once("SIGTERM", () => process.exit(0));
