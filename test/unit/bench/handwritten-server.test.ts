import { join } from "node:path";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnServer } from "../../../harness/server-process.ts";
import type { SpawnedServer } from "../../../harness/server-process.ts";

// The baseline of target 1 must answer correctly, or the ratios against it mean nothing.
describe("bench/suites/handwritten-server.ts", () => {
  let server: SpawnedServer;
  const a = Array.from({ length: 16 }, (_, i) => i);
  const b = Array.from({ length: 16 }, () => 3);
  const inputs = (extra: (data: number[]) => object) => [
    { name: "INPUT0", datatype: "INT32", shape: [1, 16], ...extra(a) },
    { name: "INPUT1", datatype: "INT32", shape: [1, 16], ...extra(b) },
  ];

  beforeAll(async () => {
    const root = join(import.meta.dirname, "..", "..", "..");
    server = await spawnServer("node", ["--import", "tsx", join(root, "bench", "suites", "handwritten-server.ts"), "--repo", join(root, "functions"), "--models", "simple", "--port", "0"]);
  });
  afterAll(() => server?.stop());

  it("answers `simple` with JSON tensors: OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1", async () => {
    const response = await request(`${server.url}/v2/models/simple/infer`, { method: "POST", body: JSON.stringify({ inputs: inputs((data) => ({ data })) }) });
    expect(response.statusCode).toBe(200);
    const body = (await response.body.json()) as { outputs: { name: string; shape: number[]; data: number[] }[] };
    expect(body.outputs.map((o) => o.name).sort()).toEqual(["OUTPUT0", "OUTPUT1"]);
    expect(body.outputs.find((o) => o.name === "OUTPUT0")).toMatchObject({ shape: [1, 16], data: a.map((v) => v + 3) });
    expect(body.outputs.find((o) => o.name === "OUTPUT1")).toMatchObject({ shape: [1, 16], data: a.map((v) => v - 3) });
  });

  it("answers `simple` with binary tensors in and out", async () => {
    const header = Buffer.from(JSON.stringify({ inputs: inputs(() => ({ parameters: { binary_data_size: 64 } })), parameters: { binary_data_output: true } }));
    const body = Buffer.concat([header, Buffer.from(Int32Array.from(a).buffer), Buffer.from(Int32Array.from(b).buffer)]);
    const response = await request(`${server.url}/v2/models/simple/infer`, { method: "POST", body, headers: { "inference-header-content-length": String(header.length) } });
    expect(response.statusCode).toBe(200);
    const bytes = Buffer.from(await response.body.arrayBuffer());
    const jsonEnd = Number(response.headers["inference-header-content-length"]);
    const meta = JSON.parse(bytes.toString("utf8", 0, jsonEnd)) as { outputs: { name: string; parameters: { binary_data_size: number } }[] };
    expect(meta.outputs.map((o) => o.parameters.binary_data_size)).toEqual([64, 64]);
    let offset = jsonEnd;
    const values: Record<string, number[]> = {};
    for (const o of meta.outputs) {
      values[o.name] = Array.from(new Int32Array(bytes.buffer.slice(bytes.byteOffset + offset, bytes.byteOffset + offset + 64)));
      offset += 64;
    }
    expect(values).toEqual({ OUTPUT0: a.map((v) => v + 3), OUTPUT1: a.map((v) => v - 3) });
  });

  it("answers 404 for a model it does not serve", async () => {
    const response = await request(`${server.url}/v2/models/nope/infer`, { method: "POST", body: "{}" });
    await response.body.text();
    expect(response.statusCode).toBe(404);
  });
});
