import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { parseDocument } from "yaml";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FUNCTIONS, startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { mlpReference } from "../../models/mlp.ts";
import { chooseThread, INLINE_MAX_BATCH_US, INLINE_THRESHOLD_US } from "../../runtime/lifecycle/execution-thread.ts";
import { mulberry32 } from "../../models/prng.ts";
import { drawText, ppocrClsPreprocess, rotate180, SAMPLE_TEXT } from "../../models/text-image.ts";

/** A copy of the example functions, every onnxruntime one (or only those in `only`) with `execution_thread: <thread>`. */
function repositoryWith(thread: "main" | "worker", only?: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), `tensorfn-thread-${thread}-`));
  cpSync(FUNCTIONS, dir, { recursive: true });
  for (const name of readdirSync(dir)) {
    if (name === "simple_identity" || (only && !only.includes(name))) continue;
    // Merged into the file's own parameters (mlp has some).
    const file = join(dir, name, "function.yaml");
    const doc = parseDocument(readFileSync(file, "utf8"));
    doc.setIn(["parameters", "execution_thread"], thread);
    writeFileSync(file, doc.toString());
  }
  return dir;
}

async function parameters(server: TestServer, model: string) {
  const config = await (await fetch(`${server.url}/v2/models/${model}/config`)).json();
  const metadata = await (await fetch(`${server.url}/v2/models/${model}`)).json();
  return { config: config.parameters as Record<string, { string_value: string }>, metadata: metadata.parameters as Record<string, unknown> };
}

async function infer(server: TestServer, model: string, inputs: unknown[]) {
  const res = await fetch(`${server.url}/v2/models/${model}/infer`, { method: "POST", body: JSON.stringify({ inputs }) });
  expect(res.status).toBe(200);
  return (await res.json()).outputs as { name: string; shape: number[]; data: unknown[] }[];
}

const range = Array.from({ length: 16 }, (_, i) => i - 5);

async function checkSimple(server: TestServer, offset = 0) {
  const y = range.map((v) => v * 3 + offset);
  const out = await infer(server, "simple", [
    { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: range },
    { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: y },
  ]);
  expect(out.find((o) => o.name === "OUTPUT0")!.data).toEqual(range.map((v, i) => v + y[i]!));
  expect(out.find((o) => o.name === "OUTPUT1")!.data).toEqual(range.map((v, i) => v - y[i]!));
}

async function checkMlp(server: TestServer, seed: number) {
  const random = mulberry32(seed);
  const x = Float32Array.from({ length: 512 }, () => random() * 2 - 1);
  const expected = mlpReference(x, 1);
  const [probs] = await infer(server, "mlp", [{ name: "input", datatype: "FP32", shape: [1, 512], data: [...x] }]);
  expect(probs!.data).toHaveLength(10);
  probs!.data.forEach((v, i) => expect(Math.abs((v as number) - expected[i]!)).toBeLessThan(1e-5));
}

/** Every example function answers correctly on this server. */
async function checkEveryFunction(server: TestServer) {
  await checkSimple(server);
  const strings = await infer(server, "simple_string", [
    { name: "INPUT0", datatype: "BYTES", shape: [1, 16], data: range.map(String) },
    { name: "INPUT1", datatype: "BYTES", shape: [1, 16], data: range.map(() => "-7") },
  ]);
  expect(strings[0]!.data).toEqual(range.map((v) => String(v - 7)));
  await checkMlp(server, 5);
  const identity = await infer(server, "simple_identity", [{ name: "INPUT0", datatype: "BYTES", shape: [1, 2], data: ["a", "bc"] }]);
  expect(identity[0]!.data).toEqual(["a", "bc"]);
  const upright = drawText(SAMPLE_TEXT);
  const crops = [upright, rotate180(upright)].map((img) => [...ppocrClsPreprocess(img.data, img.width, img.height)]);
  const [cls] = await infer(server, "ocr_cls", [{ name: "x", datatype: "FP32", shape: [2, 3, 48, 192], data: crops.flat() }]);
  expect(cls!.data[0]).toBeGreaterThan(0.9); // upright: class 0
  expect(cls!.data[3]).toBeGreaterThan(0.9); // rotated: class 1
  const [logits] = await infer(server, "resnet", [{ name: "input", datatype: "FP32", shape: [1, 3, 224, 224], data: new Array(3 * 224 * 224).fill(0.5) }]);
  expect(logits!.shape).toEqual([1, 1000]);
  expect(logits!.data.every((v) => Number.isFinite(v))).toBe(true);
}

describe("execution_thread auto (the default)", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it("runs simple on the event loop and says so, with what it measured, in /config and metadata", async () => {
    const { config, metadata } = await parameters(server, "simple");
    expect(config.execution_thread).toEqual({ string_value: "main" });
    expect(config.execution_thread_requested).toEqual({ string_value: "auto" });
    expect(Number(config.execution_thread_measured_us!.string_value)).toBeLessThan(INLINE_THRESHOLD_US);
    expect(Number(config.execution_thread_measured_max_batch_us!.string_value)).toBeLessThan(INLINE_MAX_BATCH_US);
    expect(metadata.execution_thread).toBe("main");
  });

  it("places mlp by the law on what it measured (on this machine: the event loop, ~0.2 ms at batch 1, ~2 ms at 64)", async () => {
    const { config } = await parameters(server, "mlp");
    const batch1Us = Number(config.execution_thread_measured_us!.string_value);
    const maxBatchUs = config.execution_thread_measured_max_batch_us && Number(config.execution_thread_measured_max_batch_us.string_value);
    expect(config.execution_thread).toEqual({ string_value: chooseThread({ batch1Us, maxBatchUs, maxBatch: 64 }) });
  });

  it("runs resnet in a worker thread", async () => {
    const { config, metadata } = await parameters(server, "resnet");
    expect(config.execution_thread).toEqual({ string_value: "worker" });
    expect(Number(config.execution_thread_measured_us!.string_value)).toBeGreaterThan(INLINE_THRESHOLD_US);
    expect(metadata.execution_thread).toBe("worker");
  });

  it("answers every example function correctly with inline and worker sessions in one process", async () => {
    expect((await parameters(server, "ocr_cls")).config.execution_thread?.string_value).toBe("worker");
    await checkEveryFunction(server);
  });
});

describe("inline and worker sessions side by side", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ repository: repositoryWith("worker", ["mlp"]) });
  });
  afterAll(() => server.close());

  it("serves inline simple and worker mlp under concurrent load, every answer correct", async () => {
    expect((await parameters(server, "simple")).config.execution_thread?.string_value).toBe("main");
    expect((await parameters(server, "mlp")).config.execution_thread?.string_value).toBe("worker");
    const requests: Promise<void>[] = [];
    for (let i = 0; i < 200; i++) requests.push(i % 2 === 0 ? checkSimple(server, i) : checkMlp(server, i));
    await Promise.all(requests);
  });
});

describe.each(["main", "worker"] as const)("execution_thread %s (forced)", (thread) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ repository: repositoryWith(thread) });
  });
  afterAll(() => server.close());

  it(`places every onnxruntime function on ${thread}, shown in /config without a measurement`, async () => {
    for (const model of ["simple", "simple_string", "mlp", "ocr_cls", "resnet"]) {
      const { config, metadata } = await parameters(server, model);
      expect(config.execution_thread, model).toEqual({ string_value: thread });
      expect(config.execution_thread_measured_us, model).toBeUndefined();
      expect(metadata.execution_thread, model).toBe(thread);
    }
  });

  it("answers every example function correctly", async () => {
    await checkEveryFunction(server);
  });
});

describe("execution_thread auto while every function loads at once (--model-control-mode none)", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ controlMode: "none" });
  }, 120_000);
  afterAll(() => server.close());

  it("still puts simple on the event loop and resnet in a worker: the timing is the worker thread's, not the busy loop's", async () => {
    expect((await parameters(server, "simple")).config.execution_thread).toEqual({ string_value: "main" });
    expect((await parameters(server, "resnet")).config.execution_thread).toEqual({ string_value: "worker" });
  });
});
