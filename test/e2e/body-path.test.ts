import { gzipSync, deflateSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../../harness/start-server.ts";

// On Node the infer route reads bodies through the adapter's DirectBody (adapters/node/request-listener.ts);
// under Bun and Deno through Request. Either way the same bytes must give the same answers.
let server: TestServer;
beforeAll(async () => {
  server = await startServer({ controlMode: "none", maxInputBytes: 64 * 1024 });
});
afterAll(() => server?.close());

const ints = Array.from({ length: 16 }, (_, i) => i);
const body = JSON.stringify({
  inputs: [
    { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: ints },
    { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: ints.map(() => 1) },
  ],
});

function infer(data: BodyInit, headers: Record<string, string> = {}) {
  return fetch(`${server.url}/v2/models/simple/infer`, { method: "POST", body: data, headers: { "content-type": "application/json", ...headers } });
}

async function sums(response: Response): Promise<number[]> {
  expect(response.status).toBe(200);
  const json = (await response.json()) as { outputs: { name: string; data: number[] }[] };
  return json.outputs.find((o) => o.name === "OUTPUT0")!.data;
}

describe("the infer route's body path", () => {
  const expected = ints.map((i) => i + 1);

  it("answers a plain, a gzip and a deflate body alike", async () => {
    expect(await sums(await infer(body))).toEqual(expected);
    expect(await sums(await infer(gzipSync(body), { "content-encoding": "gzip" }))).toEqual(expected);
    expect(await sums(await infer(deflateSync(body), { "content-encoding": "deflate" }))).toEqual(expected);
  });

  it("reads a chunked body (no Content-Length)", async () => {
    const bytes = new TextEncoder().encode(body);
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(bytes.subarray(0, 50));
        c.enqueue(bytes.subarray(50));
        c.close();
      },
    });
    const response = await fetch(`${server.url}/v2/models/simple/infer`, { method: "POST", body: stream, duplex: "half" } as RequestInit);
    expect(await sums(response)).toEqual(expected);
  });

  it("refuses a body over --max-input-size with 413, declared or inflated, and keeps serving", async () => {
    const big = JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 16], data: ints, pad: "x".repeat(70 * 1024) }] });
    const declared = await infer(big);
    expect(declared.status).toBe(413);
    expect(((await declared.json()) as { error: string }).error).toMatch(/exceeds the limit of 65536 bytes/);
    const inflated = await infer(gzipSync(big), { "content-encoding": "gzip" });
    expect(inflated.status).toBe(413);
    expect(((await inflated.json()) as { error: string }).error).toMatch(/inflated request body exceeds/);
    expect(await sums(await infer(body))).toEqual(expected);
  });

  it("refuses a body that is not the gzip it claims with 400", async () => {
    const response = await infer(body, { "content-encoding": "gzip" });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toMatch(/not valid gzip data/);
  });
});
