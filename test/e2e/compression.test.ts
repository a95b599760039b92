import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request } from "node:http";
import { gunzipSync, inflateSync } from "node:zlib";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

// Response compression (runtime/http/compression.ts) as a client sees it. node:http, unlike
// fetch, hands back the bytes as sent, so the test inflates them itself.
let server: TestServer;
beforeAll(async () => {
  server = await startServer({ repository: tempRepository("simple") });
});
afterAll(() => server.close());

const range = (n: number, f: (i: number) => number) => Array.from({ length: n }, (_, i) => f(i));
const a = range(16, (i) => 3 * i);
const b = range(16, (i) => i);

function post(body: Uint8Array, headers: Record<string, string>, path = "/v2/models/simple/infer") {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>((resolve, reject) => {
    const req = request(`${server.url}${path}`, { method: "POST", headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const jsonBody = new TextEncoder().encode(
  JSON.stringify({
    inputs: [
      { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: a },
      { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: b },
    ],
  }),
);

function binaryBody() {
  const header = new TextEncoder().encode(
    JSON.stringify({
      inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], parameters: { binary_data_size: 64 } })),
      parameters: { binary_data_output: true },
    }),
  );
  const body = new Uint8Array(header.length + 128);
  body.set(header);
  body.set(new Uint8Array(Int32Array.from(a).buffer), header.length);
  body.set(new Uint8Array(Int32Array.from(b).buffer), header.length + 64);
  return { body, headerLength: header.length };
}

describe("response compression", () => {
  it("deflates a JSON response when Accept-Encoding asks for deflate", async () => {
    const res = await post(jsonBody, { "accept-encoding": "deflate" });
    expect(res.status).toBe(200);
    expect(res.headers["content-encoding"]).toBe("deflate");
    expect(res.headers.vary).toMatch(/Accept-Encoding/i);
    const outputs = JSON.parse(inflateSync(res.body).toString()).outputs;
    expect(outputs.map((o: { data: number[] }) => o.data)).toEqual([range(16, (i) => 4 * i), range(16, (i) => 2 * i)]);
  });

  it("honours q=0: `gzip;q=0, deflate` gets deflate, `identity` gets the body as is", async () => {
    const deflated = await post(jsonBody, { "accept-encoding": "gzip;q=0, deflate" });
    expect(deflated.headers["content-encoding"]).toBe("deflate");
    expect(JSON.parse(inflateSync(deflated.body).toString()).outputs[0].data).toEqual(range(16, (i) => 4 * i));
    const plain = await post(jsonBody, { "accept-encoding": "identity" });
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(JSON.parse(plain.body.toString()).outputs[1].data).toEqual(range(16, (i) => 2 * i));
  });

  for (const [encoding, inflate] of [
    ["gzip", gunzipSync],
    ["deflate", inflateSync],
  ] as const) {
    it(`compresses a binary response with ${encoding}; Inference-Header-Content-Length describes the inflated body`, async () => {
      const { body, headerLength } = binaryBody();
      const res = await post(body, { "accept-encoding": encoding, "inference-header-content-length": String(headerLength) });
      expect(res.status).toBe(200);
      expect(res.headers["content-type"]).toBe("application/octet-stream");
      expect(res.headers["content-encoding"]).toBe(encoding);
      const bytes = inflate(res.body);
      const jsonLength = Number(res.headers["inference-header-content-length"]);
      expect(bytes.length).toBe(jsonLength + 128);
      const header = JSON.parse(bytes.subarray(0, jsonLength).toString());
      expect(header.outputs.map((o: { name: string; parameters: { binary_data_size: number } }) => [o.name, o.parameters.binary_data_size])).toEqual([
        ["OUTPUT0", 64],
        ["OUTPUT1", 64],
      ]);
      const ints = (from: number) => [...new Int32Array(bytes.buffer.slice(bytes.byteOffset + from, bytes.byteOffset + from + 64))];
      expect(ints(jsonLength)).toEqual(range(16, (i) => 4 * i));
      expect(ints(jsonLength + 64)).toEqual(range(16, (i) => 2 * i));
    });
  }

  it("leaves errors, metadata, configuration, statistics and the index as they are, as Triton (its asyncio client reads them without inflating); /metrics is compressed", async () => {
    const get = (path: string) =>
      new Promise<{ headers: Record<string, string | string[] | undefined>; body: Buffer }>((resolve, reject) => {
        request(`${server.url}${path}`, { headers: { "accept-encoding": "gzip, deflate" } }, (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
        })
          .on("error", reject)
          .end();
      });
    for (const path of ["/v2", "/v2/models/simple", "/v2/models/simple/config", "/v2/models/simple/stats", "/v2/health/ready"]) {
      const res = await get(path);
      expect(res.headers["content-encoding"], path).toBeUndefined();
      expect(() => JSON.parse(res.body.toString()), path).not.toThrow();
    }
    const unknown = await post(jsonBody, { "accept-encoding": "gzip" }, "/v2/models/nothing/infer");
    expect([unknown.status, unknown.headers["content-encoding"]]).toEqual([404, undefined]);
    expect(JSON.parse(unknown.body.toString()).error).toMatch(/unknown model/);
    const metrics = await get("/metrics");
    expect(metrics.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(metrics.body).toString()).toMatch(/nv_inference_count/);
  });
});
