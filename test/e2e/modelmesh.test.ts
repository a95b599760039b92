import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { copyFileSync, mkdirSync, mkdtempSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { credentials, loadPackageDefinition, Metadata } from "@grpc/grpc-js";
import type { Client, ServiceError } from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { FUNCTIONS, startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

// ModelMesh's model-runtime SPI (mmesh.ModelRuntime) driven as ModelMesh drives it, by a client
// built from the .proto (@grpc/proto-loader), against the real server and ONNX Runtime: models laid
// out as ModelMesh's puller leaves them, loaded by id, served over KServe v2 gRPC, sized, unloaded.

const PROTO = new URL("../../runtime/grpc/proto/", import.meta.url).pathname;
const CONFIG_PROTO = new URL("../../runtime/config/proto/", import.meta.url).pathname;
const definition = loadSync(["model_runtime.proto", "grpc_service.proto"], { includeDirs: [PROTO, CONFIG_PROTO], keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true });
type Creds = ReturnType<typeof credentials.createInsecure>;
const loaded = loadPackageDefinition(definition) as unknown as {
  mmesh: { ModelRuntime: new (address: string, creds: Creds) => Client };
  inference: { GRPCInferenceService: new (address: string, creds: Creds) => Client };
};
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function call(client: Client, method: string, request: Json): Promise<Json> {
  return new Promise((resolve, reject) => {
    (client as unknown as Record<string, (r: Json, m: Metadata, cb: (e: ServiceError | null, v: Json) => void) => void>)[method]!(request, new Metadata(), (error, value) => (error ? reject(error) : resolve(value)));
  });
}

const SIMPLE = join(FUNCTIONS, "simple", "1", "model.onnx");
const BUDGET = 512 * 1024 * 1024;
const int32s = (values: number[]) => Buffer.from(new Int32Array(values).buffer);
const ramp = Array.from({ length: 16 }, (_, i) => i);
const simpleRequest = (model: string) => ({
  model_name: model,
  inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16] })),
  raw_input_contents: [int32s(ramp), int32s(ramp)],
});

let server: TestServer;
let runtime: Client;
let kserve: Client;
let root: string;
beforeAll(async () => {
  // As ModelMesh's puller leaves them under its ROOT_MODEL_DIR: one folder per model id.
  root = mkdtempSync(join(tmpdir(), "tensorfn-modelmesh-"));
  mkdirSync(join(root, "bare__isvc-1"));
  copyFileSync(SIMPLE, join(root, "bare__isvc-1", "simple.onnx")); // a bare model file
  mkdirSync(join(root, "triton__isvc-2", "simple", "1"), { recursive: true }); // a Triton model folder named for its storage path
  copyFileSync(SIMPLE, join(root, "triton__isvc-2", "simple", "1", "model.onnx"));
  writeFileSync(join(root, "triton__isvc-2", "simple", "config.pbtxt"), `name: "simple"\nplatform: "onnxruntime_onnx"\nmax_batch_size: 4\n`);
  mkdirSync(join(root, "versions__isvc-3", "7"), { recursive: true }); // version folders, no config, any file name
  copyFileSync(SIMPLE, join(root, "versions__isvc-3", "7", "exported.onnx"));
  mkdirSync(join(root, "escape__isvc-4"));
  symlinkSync(SIMPLE, join(root, "escape__isvc-4", "model.onnx")); // a link out of the root
  server = await startServer({ repository: tempRepository(), controlMode: "explicit", grpc: true, modelmesh: { root }, budgets: { host: BUDGET } });
  runtime = new loaded.mmesh.ModelRuntime(server.grpc!, credentials.createInsecure());
  kserve = new loaded.inference.GRPCInferenceService(server.grpc!, credentials.createInsecure());
}, 120_000);
afterAll(async () => {
  runtime?.close();
  kserve?.close();
  await server?.close();
});

const load = (id: string, path: string, key = JSON.stringify({ model_type: { name: "onnx", version: "1" } })) => call(runtime, "loadModel", { modelId: id, modelType: "", modelPath: path, modelKey: key });

describe("ModelMesh's model-runtime SPI", () => {
  it("reports READY with the host memory budget as capacity and the KServe methods ModelMesh may forward with the id in field 1", async () => {
    const status = await call(runtime, "runtimeStatus", {});
    expect(status).toMatchObject({ status: "READY", capacityInBytes: BUDGET, modelLoadingTimeoutMs: 120_000, runtimeVersion: expect.any(String) });
    expect(status.defaultModelSizeInBytes).toBeGreaterThan(0);
    expect(status.methodInfos["inference.GRPCInferenceService/ModelInfer"]).toEqual({ idInjectionPath: [1] });
    expect(status.methodInfos["inference.GRPCInferenceService/ModelMetadata"]).toEqual({ idInjectionPath: [1] });
  });

  it("loads each layout the puller leaves, serves it by model id, and sizes it as the memory tensorfn accounts for", async () => {
    const bytes = statSync(SIMPLE).size;
    const predicted = await call(runtime, "predictModelSize", { modelId: "bare__isvc-1", modelPath: join(root, "bare__isvc-1", "simple.onnx") });
    expect(predicted.sizeInBytes).toBe(2 * bytes);
    for (const [id, path] of [
      ["bare__isvc-1", join(root, "bare__isvc-1", "simple.onnx")],
      ["triton__isvc-2", join(root, "triton__isvc-2")],
      ["versions__isvc-3", join(root, "versions__isvc-3")],
    ]) {
      const { sizeInBytes } = await load(id!, path!);
      // The kept bytes and one session's worth, as the memory budget counts a loaded version.
      expect(sizeInBytes, id).toBe(2 * bytes);
      expect((await call(runtime, "modelSize", { modelId: id })).sizeInBytes).toBe(sizeInBytes);
      const answer = await call(kserve, "ModelInfer", simpleRequest(id!));
      expect(answer.model_name, id).toBe(id);
      expect([...new Int32Array(new Uint8Array(answer.raw_output_contents[0]).buffer)]).toEqual(ramp.map((v) => 2 * v));
    }
    // The config.pbtxt's own name does not have to match the id; its settings hold.
    const config = await call(kserve, "ModelConfig", { name: "triton__isvc-2" });
    expect(config.config.max_batch_size).toBe(4);
    expect((await call(kserve, "ModelMetadata", { name: "versions__isvc-3" })).versions).toEqual(["7"]);
    const index = await call(kserve, "RepositoryIndex", { ready: true });
    expect(index.models.map((m: Json) => m.name).sort()).toEqual(["bare__isvc-1", "triton__isvc-2", "versions__isvc-3"]);
  });

  it("unloads by forgetting: the model leaves the index and its id answers NOT_FOUND; unloading an unknown id succeeds", async () => {
    await load("gone__isvc-5", join(root, "bare__isvc-1"));
    await call(runtime, "unloadModel", { modelId: "gone__isvc-5" });
    expect((await call(kserve, "RepositoryIndex", {})).models.map((m: Json) => m.name)).not.toContain("gone__isvc-5");
    await expect(call(kserve, "ModelInfer", simpleRequest("gone__isvc-5"))).rejects.toMatchObject({ code: 5 });
    await expect(call(runtime, "modelSize", { modelId: "gone__isvc-5" })).rejects.toMatchObject({ code: 5 });
    expect(await call(runtime, "unloadModel", { modelId: "never__isvc-6" })).toEqual({});
  });

  it("refuses with INVALID_ARGUMENT, holding nothing: ids that are not names, other formats, paths outside the root, models it cannot read", async () => {
    const refused = async (request: Promise<Json>, details: RegExp) => {
      await expect(request).rejects.toMatchObject({ code: 3, details: expect.stringMatching(details) });
    };
    await refused(load("../up", join(root, "bare__isvc-1")), /invalid function name/);
    await refused(load("pt__isvc-7", join(root, "bare__isvc-1"), JSON.stringify({ model_type: { name: "pytorch" } })), /model format 'pytorch' is not one tensorfn serves \(onnx, triton\)/);
    await refused(load("outside__isvc-8", join(FUNCTIONS, "simple")), /is not under the ModelMesh model folder/);
    await refused(load("outside__isvc-8", join(root, "..")), /is not under the ModelMesh model folder/);
    await refused(load("missing__isvc-9", join(root, "nothing-here")), /does not exist/);
    await refused(load("escape__isvc-4", join(root, "escape__isvc-4")), /model file escape__isvc-4\/model\.onnx was not found inside the function's folder/);
    writeFileSync(join(root, "junk.onnx"), "not a model");
    await expect(load("junk__isvc-10", join(root, "junk.onnx"))).rejects.toMatchObject({ code: 3 });
    const names = (await call(kserve, "RepositoryIndex", {})).models.map((m: Json) => m.name);
    for (const id of ["pt__isvc-7", "outside__isvc-8", "missing__isvc-9", "escape__isvc-4", "junk__isvc-10"]) expect(names).not.toContain(id);
  });

  it("purges what it loaded when ModelMesh asks for the status again (ModelMesh restarted)", async () => {
    await load("again__isvc-11", join(root, "bare__isvc-1"));
    expect((await call(runtime, "runtimeStatus", {})).status).toBe("READY");
    expect((await call(kserve, "RepositoryIndex", {})).models).toEqual([]);
  });
});
