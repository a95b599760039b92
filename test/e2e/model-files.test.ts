import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";
import { DataType, encodeModel, graph, node, valueInfo } from "../../models/onnx-graph.ts";

// What a load reads from a repository or an upload, through the real server and onnxruntime under
// Node, Bun and Deno: a model's external data only from beside it, and only regular files.

const WEIGHTS = [1, 2, 3, 4];

/** y = x + W, UINT8[4], with W's bytes in the file `location` (an initializer with external data). */
function externalModel(location: string, length = 4): Uint8Array {
  return encodeModel(graph({
    name: "external",
    nodes: [node("Add", ["x", "W"], ["y"])],
    inputs: [valueInfo("x", DataType.UINT8, [4])],
    outputs: [valueInfo("y", DataType.UINT8, [4])],
    initializers: [{ name: "W", dataType: DataType.UINT8, dims: [4], dataLocation: 1, externalData: [{ key: "location", value: location }, { key: "offset", value: "0" }, { key: "length", value: String(length) }] }],
  }));
}

/** A function folder `name` whose version 1 holds `files` (model.onnx among them). */
function addFunction(repo: string, name: string, files: Record<string, Uint8Array | string>, config?: string): void {
  mkdirSync(join(repo, name, "1"), { recursive: true });
  for (const [file, content] of Object.entries(files)) writeFileSync(join(repo, name, "1", file), content);
  if (config) writeFileSync(join(repo, name, "function.yaml"), config);
}

function fifo(path: string): void {
  execFileSync("mkfifo", [path]);
}

let server: TestServer;
let repo: string;

beforeAll(async () => {
  repo = tempRepository("simple");
  const outside = mkdtempSync(join(tmpdir(), "tensorfn-outside-"));
  writeFileSync(join(outside, "weights.bin"), new Uint8Array([9, 9, 9, 9]));
  // The server's working directory holds package.json: left to onnxruntime, "package.json" read it.
  addFunction(repo, "cwd_file", { "model.onnx": externalModel("package.json") });
  addFunction(repo, "up_and_out", { "model.onnx": externalModel("../../../package.json") });
  addFunction(repo, "absolute", { "model.onnx": externalModel(join(outside, "weights.bin")) });
  addFunction(repo, "beside", { "model.onnx": externalModel("weights.bin"), "weights.bin": new Uint8Array(WEIGHTS) });
  addFunction(repo, "linked_out", { "model.onnx": externalModel("weights.bin") });
  symlinkSync(join(outside, "weights.bin"), join(repo, "linked_out", "1", "weights.bin"));
  addFunction(repo, "short", { "model.onnx": externalModel("weights.bin", 4), "weights.bin": new Uint8Array([1, 2]) });
  addFunction(repo, "fifo_data", { "model.onnx": externalModel("weights.bin") });
  fifo(join(repo, "fifo_data", "1", "weights.bin"));
  // FIFOs where a load reads a file: the model, a label file, a warm-up file, a tokenizer.
  mkdirSync(join(repo, "fifo_model", "1"), { recursive: true });
  writeFileSync(join(repo, "fifo_model", "function.yaml"), readFileSync(join(repo, "simple", "function.yaml")));
  fifo(join(repo, "fifo_model", "1", "model.onnx"));
  cpSync(join(repo, "simple"), join(repo, "fifo_labels"), { recursive: true });
  writeFileSync(join(repo, "fifo_labels", "function.yaml"), readFileSync(join(repo, "simple", "function.yaml"), "utf8").replace("{ name: OUTPUT0, data_type: TYPE_INT32, dims: [16] }", "{ name: OUTPUT0, data_type: TYPE_INT32, dims: [16], label_filename: labels.txt }"));
  fifo(join(repo, "fifo_labels", "labels.txt"));
  cpSync(join(repo, "simple"), join(repo, "fifo_warmup"), { recursive: true });
  mkdirSync(join(repo, "fifo_warmup", "warmup"));
  fifo(join(repo, "fifo_warmup", "warmup", "in0"));
  writeFileSync(
    join(repo, "fifo_warmup", "function.yaml"),
    `${readFileSync(join(repo, "simple", "function.yaml"), "utf8")}model_warmup:\n  - name: w\n    batch_size: 1\n    inputs:\n      INPUT0: { data_type: TYPE_INT32, dims: [16], input_data_file: in0 }\n      INPUT1: { data_type: TYPE_INT32, dims: [16], zero_data: true }\n`,
  );
  mkdirSync(join(repo, "fifo_handler", "1"), { recursive: true });
  writeFileSync(join(repo, "fifo_handler", "function.yaml"), "backend: handler\nhandler: handler.ts\n");
  fifo(join(repo, "fifo_handler", "handler.ts"));
  cpSync(join(repo, "simple"), join(repo, "device_model"), { recursive: true });
  writeFileSync(join(repo, "device_model", "function.yaml"), `${readFileSync(join(repo, "simple", "function.yaml"), "utf8")}default_model_filename: zero.onnx\n`);
  symlinkSync("/dev/zero", join(repo, "device_model", "1", "zero.onnx"));
  server = await startServer({ repository: repo, controlMode: "explicit" });
});
afterAll(() => server?.close());

async function load(name: string, parameters: Record<string, unknown> = {}): Promise<{ status: number; error?: string }> {
  const response = await fetch(`${server.url}/v2/repository/models/${name}/load`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ parameters }), signal: AbortSignal.timeout(20_000) });
  const body = (await response.json()) as { error?: string };
  return { status: response.status, error: body.error };
}

async function addOne(name: string): Promise<{ status: number; data?: number[]; error?: string }> {
  const response = await fetch(`${server.url}/v2/models/${name}/infer`, { method: "POST", body: JSON.stringify({ inputs: [{ name: "x", datatype: "UINT8", shape: [4], data: [0, 10, 20, 30] }] }) });
  const body = (await response.json()) as { outputs?: { data: number[] }[]; error?: string };
  return { status: response.status, data: body.outputs?.[0]?.data, error: body.error };
}

describe("a model's external data", () => {
  it("is read from beside the model and handed to onnxruntime: a model with its weights in weights.bin serves", async () => {
    expect(await load("beside")).toEqual({ status: 200, error: undefined });
    expect(await addOne("beside")).toEqual({ status: 200, data: [1, 12, 23, 34], error: undefined });
    // Parked, it wakes from its kept bytes with the weights read again from beside it.
    expect((await fetch(`${server.url}/v2/repository/models/beside/park`, { method: "POST" })).status).toBe(200);
    expect(await addOne("beside")).toEqual({ status: 200, data: [1, 12, 23, 34], error: undefined });
  });

  it("never comes from the server's working directory: a location that is not in the version folder is a 400 naming the initializer", async () => {
    const { status, error } = await load("cwd_file");
    expect(status).toBe(400);
    expect(error).toBe(`failed to load 'cwd_file': failed to load model cwd_file/1/model.onnx: initializer 'W' keeps its data in "package.json", which is not in the model's version folder`);
    expect((await addOne("cwd_file")).status).not.toBe(200);
  });

  it("refuses a location with '..', an absolute one, and a symlink out of the version folder, without an absolute path in the answer", async () => {
    for (const name of ["up_and_out", "absolute"]) {
      const { status, error } = await load(name);
      expect(status, name).toBe(400);
      expect(error).toMatch(/initializer 'W' keeps its data in ".*", which is not a plain path beside the model/);
    }
    const linked = await load("linked_out");
    expect(linked).toEqual({ status: 400, error: `failed to load 'linked_out': failed to load model linked_out/1/model.onnx: initializer 'W' keeps its data in "weights.bin", which is not in the model's version folder` });
    // The model's own location is quoted (cut at 128 characters); nothing of the server's paths is.
    expect((await load("cwd_file")).error).not.toContain(repo);
  });

  it("refuses a file shorter than its tensors and one that is a FIFO, at once", async () => {
    expect((await load("short")).error).toMatch(/initializer 'W' keeps its data in "weights\.bin", which holds 2 bytes; the tensor's end at 4 lies past them/);
    const started = Date.now();
    expect(await load("fifo_data")).toEqual({ status: 400, error: `failed to load 'fifo_data': failed to load model fifo_data/1/model.onnx: initializer 'W' keeps its data in "weights.bin", which is a FIFO, not a regular file` });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("comes with an uploaded model as further file: entries, and only from them", async () => {
    const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");
    const config = JSON.stringify({ max_batch_size: 0 });
    expect(await load("uploaded", { config, "file:1/model.onnx": b64(externalModel("weights.bin")), "file:1/weights.bin": b64(new Uint8Array(WEIGHTS)) })).toEqual({ status: 200, error: undefined });
    expect((await addOne("uploaded")).data).toEqual([1, 12, 23, 34]);
    const leaky = await load("leaky", { config, "file:1/model.onnx": b64(externalModel("package.json")) });
    expect(leaky).toEqual({ status: 400, error: `failed to load 'leaky': failed to load model leaky/1/model.onnx: initializer 'W' keeps its data in "package.json", which is not in the model's version folder` });
    expect(await load("no_model", { config, "file:1/weights.bin": b64(new Uint8Array(WEIGHTS)) })).toEqual({ status: 400, error: `failed to load 'no_model': version 1 is given 'file:1/weights.bin' but not its model file 'file:1/model.onnx'` });
    expect((await load("bad_path", { config, "file:1/model.onnx": b64(externalModel("w")), "file:1/../w": "AA==" })).error).toMatch(/parameter 'file:1\/\.\.\/w': the path .* leaves or skips a folder/);
  });
});

describe("files a load reads", () => {
  it("are regular files only: FIFOs named as the model, a label file, a warm-up file and a handler are each a 400 naming the file, at once, while the server serves on", async () => {
    const started = Date.now();
    // All at once: four FIFOs opened the plain way held all four of Node's file-I/O threads.
    const [model, labels, warmup, device, again, handler] = await Promise.all(["fifo_model", "fifo_labels", "fifo_warmup", "device_model", "fifo_model", "fifo_handler"].map((name) => load(name)));
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(model).toEqual({ status: 400, error: "failed to load 'fifo_model': model file fifo_model/1/model.onnx is a FIFO, not a regular file" });
    expect(again).toEqual(model);
    expect(labels).toEqual({ status: 400, error: "failed to load 'fifo_labels': function 'fifo_labels': output 'OUTPUT0' label_filename 'labels.txt' is a FIFO, not a regular file" });
    expect(warmup).toEqual({ status: 400, error: "failed to load 'fifo_warmup': function 'fifo_warmup': model_warmup input_data_file 'in0' is a FIFO, not a regular file" });
    expect(handler).toEqual({ status: 400, error: "failed to load 'fifo_handler': function 'fifo_handler': handler handler.ts is not a regular file" });
    // A symlink to /dev/zero lies outside the function's folder: it is not read at all.
    expect(device).toEqual({ status: 400, error: "failed to load 'device_model': model file device_model/1/zero.onnx was not found inside the function's folder" });
    // The file-I/O threads are free: a load reads its model, and a gzip answer is written.
    expect((await load("simple")).status).toBe(200);
    const response = await fetch(`${server.url}/v2/models/simple/infer`, {
      method: "POST",
      headers: { "accept-encoding": "gzip" },
      body: JSON.stringify({ inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) })) }),
      signal: AbortSignal.timeout(10_000),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-encoding")).toBe("gzip");
    expect(((await response.json()) as { outputs: { data: number[] }[] }).outputs[0]!.data[15]).toBe(30); // fetch inflates it
  });
});
