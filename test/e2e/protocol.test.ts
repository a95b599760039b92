import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gzipSync, deflateSync, gunzipSync } from "node:zlib";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ maxInputBytes: 1024 * 1024 });
});
afterAll(() => server.close());

const range = (n: number, f: (i: number) => number) => Array.from({ length: n }, (_, i) => f(i));
const a = range(16, (i) => i);
const b = range(16, () => 1);

function simpleRequest(extra: Record<string, unknown> = {}) {
  return {
    inputs: [
      { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: a },
      { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: b },
    ],
    ...extra,
  };
}

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const payload = body instanceof Uint8Array ? (body as unknown as BodyInit) : JSON.stringify(body);
  return await fetch(`${server.url}${path}`, { method: "POST", body: payload, headers });
}

describe("health and metadata", () => {
  it("answers live, ready and server metadata", async () => {
    expect((await fetch(`${server.url}/v2/health/live`)).status).toBe(200);
    expect((await fetch(`${server.url}/v2/health/ready`)).status).toBe(200);
    const meta = await (await fetch(`${server.url}/v2`)).json();
    expect(meta).toMatchObject({ name: "tensorfn", extensions: expect.arrayContaining(["binary_tensor_data"]) });
  });

  it("describes a model with the batch dimension as -1", async () => {
    const res = await fetch(`${server.url}/v2/models/simple`);
    expect(await res.json()).toEqual({
      name: "simple",
      versions: ["1"],
      platform: "onnxruntime_onnx",
      inputs: [
        { name: "INPUT0", datatype: "INT32", shape: [-1, 16] },
        { name: "INPUT1", datatype: "INT32", shape: [-1, 16] },
      ],
      outputs: [
        { name: "OUTPUT0", datatype: "INT32", shape: [-1, 16] },
        { name: "OUTPUT1", datatype: "INT32", shape: [-1, 16] },
      ],
      parameters: { state: "READY", instance_count: 1, execution_provider: "cpu", execution_thread: "main" },
    });
    expect((await fetch(`${server.url}/v2/models/simple/versions/1`)).status).toBe(200);
    expect((await fetch(`${server.url}/v2/models/simple/versions/1/ready`)).status).toBe(200);
  });

  it("serves the effective config in Triton's JSON form, completed from the model", async () => {
    const config = await (await fetch(`${server.url}/v2/models/mlp/config`)).json();
    expect(config).toMatchObject({
      name: "mlp",
      max_batch_size: 64,
      input: [{ name: "input", data_type: "TYPE_FP32", dims: [512] }],
      output: [{ name: "probabilities", data_type: "TYPE_FP32", dims: [10] }],
      dynamic_batching: { max_queue_delay_microseconds: 500 },
      parameters: { execution_provider: { string_value: "cpu" } },
    });
  });

  it("answers 404 for unknown models, versions and paths, and 405 for a wrong method", async () => {
    const unknown = await fetch(`${server.url}/v2/models/nope`);
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error).toContain("Request for unknown model");
    expect((await fetch(`${server.url}/v2/models/simple/versions/7`)).status).toBe(404);
    expect((await post("/v2/models/simple/versions/7/infer", simpleRequest())).status).toBe(404);
    expect((await fetch(`${server.url}/v2/nothing/here`)).status).toBe(404);
    const wrongMethod = await fetch(`${server.url}/v2/models/simple/infer`);
    expect(wrongMethod.status).toBe(405);
  });
});

describe("JSON inference", () => {
  it("adds and subtracts, echoes the id and ignores unknown query parameters", async () => {
    const res = await post("/v2/models/simple/infer?foo=bar", simpleRequest({ id: "req-7", parameters: { note: "x" } }));
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ model_name: "simple", model_version: "1", id: "req-7" });
    expect(body.outputs).toEqual([
      { name: "OUTPUT0", datatype: "INT32", shape: [1, 16], data: range(16, (i) => i + 1) },
      { name: "OUTPUT1", datatype: "INT32", shape: [1, 16], data: range(16, (i) => i - 1) },
    ]);
  });

  it("accepts nested data and returns only the requested outputs", async () => {
    const req = simpleRequest({ outputs: [{ name: "OUTPUT1" }] });
    (req.inputs[0] as { data: unknown }).data = [a];
    const body = await (await post("/v2/models/simple/versions/1/infer", req)).json();
    expect(body.outputs).toEqual([{ name: "OUTPUT1", datatype: "INT32", shape: [1, 16], data: range(16, (i) => i - 1) }]);
  });

  it("runs a batch of 8 and refuses a batch of 9 naming the limit", async () => {
    const batch = (n: number) => ({
      inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [n, 16], data: range(n * 16, (i) => i) })),
    });
    const ok = await (await post("/v2/models/simple/infer", batch(8))).json();
    expect(ok.outputs[0].data).toEqual(range(128, (i) => 2 * i));
    const tooBig = await post("/v2/models/simple/infer", batch(9));
    expect(tooBig.status).toBe(400);
    expect((await tooBig.json()).error).toMatch(/batch-size must be <= 8/);
  });
});

describe("binary tensor extension", () => {
  function binaryRequest(outputs?: unknown) {
    const header = new TextEncoder().encode(
      JSON.stringify({
        inputs: [
          { name: "INPUT0", datatype: "INT32", shape: [1, 16], parameters: { binary_data_size: 64 } },
          { name: "INPUT1", datatype: "INT32", shape: [1, 16], parameters: { binary_data_size: 64 } },
        ],
        ...(outputs ? { outputs } : { parameters: { binary_data_output: true } }),
      }),
    );
    const body = new Uint8Array(header.length + 128);
    body.set(header);
    body.set(new Uint8Array(Int32Array.from(a).buffer), header.length);
    body.set(new Uint8Array(Int32Array.from(b).buffer), header.length + 64);
    return { body, headerLength: header.length };
  }

  it("decodes binary inputs and returns binary outputs with the header length", async () => {
    const { body, headerLength } = binaryRequest();
    const res = await post("/v2/models/simple/infer", body, { "Inference-Header-Content-Length": String(headerLength) });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/octet-stream");
    const bytes = new Uint8Array(await res.arrayBuffer());
    const jsonLength = Number(res.headers.get("inference-header-content-length"));
    const json = JSON.parse(new TextDecoder().decode(bytes.subarray(0, jsonLength)));
    expect(json.outputs[0].parameters.binary_data_size).toBe(64);
    const sum = new Int32Array(bytes.slice(jsonLength, jsonLength + 64).buffer);
    const diff = new Int32Array(bytes.slice(jsonLength + 64).buffer);
    expect([...sum]).toEqual(range(16, (i) => i + 1));
    expect([...diff]).toEqual(range(16, (i) => i - 1));
  });

  it("lets a per-output binary_data choose JSON for one output", async () => {
    const { body, headerLength } = binaryRequest([{ name: "OUTPUT0", parameters: { binary_data: false } }]);
    const res = await post("/v2/models/simple/infer", body, { "Inference-Header-Content-Length": String(headerLength) });
    expect(res.headers.get("content-type")).toBe("application/json");
    expect((await res.json()).outputs[0].data).toEqual(range(16, (i) => i + 1));
  });

  it("accepts a raw binary body (header length 0) for a single-input model and answers in binary", async () => {
    const pixels = new Float32Array(3 * 48 * 192).fill(1);
    const res = await post("/v2/models/ocr_cls/infer", new Uint8Array(pixels.buffer), { "Inference-Header-Content-Length": "0" });
    expect(res.status).toBe(200);
    const jsonLength = Number(res.headers.get("inference-header-content-length"));
    const bytes = new Uint8Array(await res.arrayBuffer());
    const json = JSON.parse(new TextDecoder().decode(bytes.subarray(0, jsonLength)));
    expect(json.outputs[0]).toMatchObject({ shape: [1, 2], parameters: { binary_data_size: 8 } });
    const probs = new Float32Array(bytes.slice(jsonLength).buffer);
    expect(probs[0]! + probs[1]!).toBeCloseTo(1, 5);
  });

  it("checks a raw binary body against the model however its header length 0 is written", async () => {
    for (const zero of ["0", "00", " 0"]) {
      const res = await post("/v2/models/ocr_cls/infer", new Uint8Array(100), { "Inference-Header-Content-Length": zero });
      expect(res.status).toBe(400);
      expect((await res.json()).error).toMatch(/^input .x.: expected 110592 bytes of binary data/);
    }
  });

  it("refuses a raw binary body for a model with two inputs", async () => {
    const res = await post("/v2/models/simple/infer", new Uint8Array(128), { "Inference-Header-Content-Length": "0" });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/exactly one input/);
  });

  it("refuses a body whose binary section does not match the declared sizes", async () => {
    const { body, headerLength } = binaryRequest();
    const res = await post("/v2/models/simple/infer", body.subarray(0, body.length - 4), {
      "Inference-Header-Content-Length": String(headerLength),
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/INPUT1/);
  });
});

describe("bad requests get a 4xx naming the problem", () => {
  const cases: [string, unknown, RegExp][] = [
    ["wrong datatype", { inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, 16], data: a }, simpleRequest().inputs[1]] }, /INPUT0.*FP32.*INT32/],
    ["wrong shape", { inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 15], data: a.slice(1) }, simpleRequest().inputs[1]] }, /unexpected shape for input 'INPUT0'/],
    ["missing input", { inputs: [simpleRequest().inputs[0]] }, /INPUT1/],
    ["unknown input", { inputs: [...simpleRequest().inputs, { name: "INPUT9", datatype: "INT32", shape: [1, 16], data: a }] }, /INPUT9/],
    ["unknown output", simpleRequest({ outputs: [{ name: "OUTPUT7" }] }), /OUTPUT7/],
    ["element count", { inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 16], data: [1, 2] }, simpleRequest().inputs[1]] }, /INPUT0/],
  ];
  for (const [what, body, message] of cases) {
    it(`answers 400 for ${what}`, async () => {
      const res = await post("/v2/models/simple/infer", body);
      expect(res.status).toBe(400);
      expect((await res.json()).error).toMatch(message);
    });
  }

  it("answers 400 for malformed JSON", async () => {
    const res = await fetch(`${server.url}/v2/models/simple/infer`, { method: "POST", body: "{ not json" });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/JSON/);
  });

  it("answers 413 for a body over --max-input-size, declared or streamed", async () => {
    const big = new Uint8Array(2 * 1024 * 1024);
    expect((await post("/v2/models/simple/infer", big)).status).toBe(413);
    const bomb = gzipSync(Buffer.alloc(4 * 1024 * 1024, 32));
    const res = await post("/v2/models/simple/infer", new Uint8Array(bomb), { "Content-Encoding": "gzip" });
    expect(res.status).toBe(413);
  });

  it("keeps serving other requests after all of the above", async () => {
    expect((await post("/v2/models/simple/infer", simpleRequest())).status).toBe(200);
  });
});

describe("compression", () => {
  it("inflates gzip and deflate request bodies", async () => {
    const json = Buffer.from(JSON.stringify(simpleRequest()));
    for (const [encoding, packed] of [["gzip", gzipSync(json)], ["deflate", deflateSync(json)]] as const) {
      const res = await post("/v2/models/simple/infer", new Uint8Array(packed), { "Content-Encoding": encoding });
      expect(res.status).toBe(200);
      expect((await res.json()).outputs[0].data[1]).toBe(2);
    }
  });

  it("compresses the response when Accept-Encoding asks for gzip", async () => {
    const { request } = await import("node:http");
    const raw = await new Promise<{ encoding?: string; body: Buffer }>((resolve, reject) => {
      const req = request(`${server.url}/v2/models/simple/infer`, { method: "POST", headers: { "accept-encoding": "gzip" } }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => resolve({ encoding: res.headers["content-encoding"], body: Buffer.concat(chunks) }));
      });
      req.on("error", reject);
      req.end(JSON.stringify(simpleRequest()));
    });
    expect(raw.encoding).toBe("gzip");
    expect(JSON.parse(gunzipSync(raw.body).toString()).outputs[0].data[0]).toBe(1);
  });
});

describe("statistics extension", () => {
  it("reports counts and durations in Triton's form, per model and version", async () => {
    // Its own server, so the counts are exactly what this test sent: two single requests, one
    // batch of 8 and one refused request, one after another (simple does not batch them together).
    const own = await startServer({ repository: tempRepository("simple") });
    try {
      const send = (body: unknown) => fetch(`${own.url}/v2/models/simple/infer`, { method: "POST", body: JSON.stringify(body) });
      const batchOf8 = { inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [8, 16], data: range(128, (i) => i) })) };
      const wrongShape = { inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 15], data: a.slice(1) }, simpleRequest().inputs[1]] };
      expect([(await send(simpleRequest())).status, (await send(simpleRequest())).status, (await send(batchOf8)).status, (await send(wrongShape)).status]).toEqual([200, 200, 200, 400]);
      const all = await (await fetch(`${own.url}/v2/models/stats`)).json();
      expect(all.model_stats.map((s: { name: string }) => s.name)).toContain("simple");
      const { model_stats } = await (await fetch(`${own.url}/v2/models/simple/versions/1/stats`)).json();
      expect(model_stats).toHaveLength(1);
      const [stats] = model_stats;
      expect(stats).toMatchObject({ name: "simple", version: "1", inference_count: 10, execution_count: 3 });
      expect(stats.inference_stats.success.count).toBe(3);
      expect(stats.inference_stats.success.ns).toBeGreaterThan(0);
      expect(stats.inference_stats.fail.count).toBe(1);
      expect(stats.inference_stats.queue.count).toBe(3);
      expect(stats.batch_stats.map((b: { batch_size: number; compute_infer: { count: number } }) => [b.batch_size, b.compute_infer.count])).toEqual([
        [1, 2],
        [8, 1],
      ]);
      expect(stats.last_inference).toBeGreaterThan(Date.now() - 60_000);
      expect((await fetch(`${own.url}/v2/models/nope/stats`)).status).toBe(404);
    } finally {
      await own.close();
    }
  });
});
