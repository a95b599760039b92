import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

// Triton's classification extension through the real server and ONNX Runtime: a requested output
// with `parameters.classification: N` answers its top N as "value:index[:label]" BYTES.

let server: TestServer;
let repo: string;
beforeAll(async () => {
  repo = tempRepository("simple", "simple_string", "mlp");
  // Ten labels for sixteen classes, with Windows line ends: classes 10–15 answer without one.
  writeFileSync(join(repo, "simple", "labels.txt"), Array.from({ length: 10 }, (_, i) => `label ${i}`).join("\r\n") + "\r\n");
  const simple = readFileSync(join(repo, "simple", "function.yaml"), "utf8");
  writeFileSync(join(repo, "simple", "function.yaml"), simple.replace("- { name: OUTPUT0, data_type: TYPE_INT32, dims: [16] }", "- { name: OUTPUT0, data_type: TYPE_INT32, dims: [16], label_filename: labels.txt }"));
  // Label files that must not load: one missing, one a link out of the function's folder.
  for (const [name, file] of [["missing_labels", "nowhere.txt"], ["linked_labels", "linked.txt"]] as const) {
    mkdirSync(join(repo, name, "1"), { recursive: true });
    writeFileSync(join(repo, name, "function.yaml"), `backend: identity\nmax_batch_size: 1\ninput: [{ name: X, data_type: TYPE_FP32, dims: [4] }]\noutput: [{ name: Y, data_type: TYPE_FP32, dims: [4], label_filename: ${file} }]\n`);
  }
  symlinkSync("/etc/hostname", join(repo, "linked_labels", "linked.txt"));
  server = await startServer({ repository: repo, controlMode: "lazy" });
}, 120_000);
afterAll(async () => {
  await server?.close();
});

type Output = { name: string; datatype: string; shape: number[]; data?: unknown[]; parameters?: { binary_data_size?: number } };

async function infer(name: string, body: object): Promise<{ status: number; json: { outputs?: Output[]; error?: string } }> {
  const r = await fetch(`${server.url}/v2/models/${name}/infer`, { method: "POST", body: JSON.stringify(body) });
  return { status: r.status, json: (await r.json()) as { outputs?: Output[]; error?: string } };
}

const ramp = Array.from({ length: 16 }, (_, i) => i);
/** Two rows: OUTPUT0 = INPUT0 + 1 rises in row 0 (top classes 15, 14, …) and falls in row 1 (0, 1, …). */
const twoRows = {
  inputs: [
    { name: "INPUT0", datatype: "INT32", shape: [2, 16], data: [...ramp, ...ramp.map((i) => 15 - i)] },
    { name: "INPUT1", datatype: "INT32", shape: [2, 16], data: Array(32).fill(1) },
  ],
};

describe("classification (Triton's extension)", () => {
  it("is listed in the server's extensions", async () => {
    const meta = (await (await fetch(`${server.url}/v2`)).json()) as { extensions: string[] };
    expect(meta.extensions).toContain("classification");
  });

  it("answers the top N of each batch entry as value:index:label, labels from label_filename, the other outputs as they are", async () => {
    const { status, json } = await infer("simple", { ...twoRows, outputs: [{ name: "OUTPUT0", parameters: { classification: 3 } }, { name: "OUTPUT1" }] });
    expect(status, json.error).toBe(200);
    expect(json.outputs).toEqual([
      { name: "OUTPUT0", datatype: "BYTES", shape: [2, 3], data: ["16:15", "15:14", "14:13", "16:0:label 0", "15:1:label 1", "14:2:label 2"] },
      { name: "OUTPUT1", datatype: "INT32", shape: [2, 16], data: [...ramp.map((i) => i - 1), ...ramp.map((i) => 14 - i)] },
    ]);
    // More classes than the output has: all of them; 0: the tensor itself.
    const all = await infer("simple", { ...twoRows, outputs: [{ name: "OUTPUT0", parameters: { classification: 100 } }] });
    expect(all.json.outputs![0]!.shape).toEqual([2, 16]);
    const none = await infer("simple", { ...twoRows, outputs: [{ name: "OUTPUT0", parameters: { classification: 0 } }] });
    expect(none.json.outputs![0]).toMatchObject({ datatype: "INT32", shape: [2, 16] });
  });

  it("sends classes in the binary extension when the output asks for binary data", async () => {
    const r = await fetch(`${server.url}/v2/models/simple/infer`, {
      method: "POST",
      body: JSON.stringify({ ...twoRows, outputs: [{ name: "OUTPUT0", parameters: { classification: 2, binary_data: true } }] }),
    });
    expect(r.status).toBe(200);
    const body = Buffer.from(await r.arrayBuffer());
    const headerLength = Number(r.headers.get("inference-header-content-length"));
    const header = JSON.parse(body.subarray(0, headerLength).toString()) as { outputs: Output[] };
    expect(header.outputs[0]).toMatchObject({ name: "OUTPUT0", datatype: "BYTES", shape: [2, 2] });
    const strings: string[] = [];
    for (let at = headerLength; at < body.length; ) {
      const length = body.readUInt32LE(at);
      strings.push(body.subarray(at + 4, at + 4 + length).toString());
      at += 4 + length;
    }
    expect(strings).toEqual(["16:15", "15:14", "16:0:label 0", "15:1:label 1"]);
  });

  it("writes float values as Triton does (six decimals), highest first, on a real classifier's probabilities", async () => {
    const x = Array.from({ length: 512 }, (_, i) => Math.sin(i) / 2);
    const input = { inputs: [{ name: "input", datatype: "FP32", shape: [1, 512], data: x }] };
    const plain = await infer("mlp", input);
    const probabilities = plain.json.outputs![0]!.data as number[];
    const classes = await infer("mlp", { ...input, outputs: [{ name: "probabilities", parameters: { classification: 5 } }] });
    expect(classes.status, classes.json.error).toBe(200);
    const expected = probabilities
      .map((p, i) => ({ p: Math.fround(p), i }))
      .sort((a, b) => b.p - a.p || a.i - b.i)
      .slice(0, 5)
      .map(({ p, i }) => `${p.toFixed(6)}:${i}`);
    expect(classes.json.outputs).toEqual([{ name: "probabilities", datatype: "BYTES", shape: [1, 5], data: expected }]);
  });

  it("refuses a classification that is not a count, or of an output whose type cannot be ranked, before running anything", async () => {
    for (const bad of [-1, 2.5, "3", true]) {
      const { status, json } = await infer("simple", { ...twoRows, outputs: [{ name: "OUTPUT0", parameters: { classification: bad } }] });
      expect(status).toBe(400);
      expect(json.error).toBe(`output 'OUTPUT0' parameter 'classification' must be a number of classes (an integer ≥ 0), got ${JSON.stringify(bad)}`);
    }
    const strings = {
      inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "BYTES", shape: [1, 16], data: ramp.map(String) })),
      outputs: [{ name: "OUTPUT0", parameters: { classification: 1 } }],
    };
    const { status, json } = await infer("simple_string", strings);
    expect(status).toBe(400);
    expect(json.error).toBe("class result not available for output 'OUTPUT0' due to unsupported type 'BYTES'");
  });

  it("fails a load whose label file is missing or outside the function's folder, naming the file and not where it lies", async () => {
    const x = { inputs: [{ name: "X", datatype: "FP32", shape: [1, 4], data: [1, 2, 3, 4] }] };
    const missing = await infer("missing_labels", x);
    expect(missing.status).toBeGreaterThanOrEqual(400);
    expect(missing.json.error).toMatch(/output 'Y' label_filename 'nowhere\.txt' was not found in the function's folder/);
    const linked = await infer("linked_labels", x);
    expect(linked.json.error).toMatch(/output 'Y' label_filename 'linked\.txt' was not found in the function's folder/);
    for (const error of [missing.json.error, linked.json.error]) expect(error).not.toContain(repo);
  });
});
