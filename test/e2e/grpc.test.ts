import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { credentials, loadPackageDefinition, Metadata } from "@grpc/grpc-js";
import type { Client, ServiceError } from "@grpc/grpc-js";
import type { Duplex } from "node:stream";
import { loadSync } from "@grpc/proto-loader";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

// KServe v2 over gRPC, driven by a client built from the .proto files with @grpc/proto-loader
// (protobufjs: another implementation than the server's @bufbuild/protobuf), against the real
// server — under Node, Bun and Deno (TENSORFN_RUNTIME).

const PROTO = new URL("../../runtime/grpc/proto/", import.meta.url).pathname;
const CONFIG_PROTO = new URL("../../runtime/config/proto/", import.meta.url).pathname;
const definition = loadSync(["grpc_service.proto", "health.proto"], { includeDirs: [PROTO, CONFIG_PROTO], keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true });
const loaded = loadPackageDefinition(definition) as unknown as {
  inference: { GRPCInferenceService: new (address: string, creds: ReturnType<typeof credentials.createInsecure>, options?: object) => Client };
  grpc: { health: { v1: { Health: new (address: string, creds: ReturnType<typeof credentials.createInsecure>) => Client } } };
};

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A unary call as a promise; rejects with the ServiceError (code, details). */
function call(client: Client, method: string, request: Json, metadata = new Metadata()): Promise<Json> {
  return new Promise((resolve, reject) => {
    (client as unknown as Record<string, (r: Json, m: Metadata, cb: (e: ServiceError | null, v: Json) => void) => void>)[method]!(request, metadata, (error, value) => (error ? reject(error) : resolve(value)));
  });
}

const int32s = (values: number[]) => Buffer.from(new Int32Array(values).buffer);
const readInt32s = (bytes: Buffer) => [...new Int32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength))];
const ramp = Array.from({ length: 16 }, (_, i) => i);
const ones = Array.from({ length: 16 }, () => 1);
/** BYTES as raw contents: each element a 4-byte little-endian length, then its bytes. */
const rawStrings = (values: string[]) =>
  Buffer.concat(
    values.flatMap((v) => {
      const length = Buffer.alloc(4);
      length.writeUInt32LE(Buffer.byteLength(v));
      return [length, Buffer.from(v)];
    }),
  );
const simpleRaw = (extra: Json = {}) => ({
  model_name: "simple",
  inputs: [
    { name: "INPUT0", datatype: "INT32", shape: [1, 16] },
    { name: "INPUT1", datatype: "INT32", shape: [1, 16] },
  ],
  raw_input_contents: [int32s(ramp), int32s(ones)],
  ...extra,
});

let server: TestServer;
let client: Client;
beforeAll(async () => {
  const repo = tempRepository("simple", "simple_string", "mlp");
  // A label for the last of simple's sixteen classes only: an empty line is no label, as in Triton.
  writeFileSync(join(repo, "simple", "labels.txt"), `${"\n".repeat(15)}sixteen\n`);
  writeFileSync(join(repo, "simple", "function.yaml"), readFileSync(join(repo, "simple", "function.yaml"), "utf8").replace("{ name: OUTPUT0, data_type: TYPE_INT32, dims: [16] }", "{ name: OUTPUT0, data_type: TYPE_INT32, dims: [16], label_filename: labels.txt }"));
  // FP16 travels only raw: an identity function shows it both ways.
  mkdirSync(join(repo, "half", "1"), { recursive: true });
  writeFileSync(join(repo, "half", "function.yaml"), "backend: identity\nmax_batch_size: 4\ninput: [{ name: X, data_type: TYPE_FP16, dims: [4] }]\noutput: [{ name: Y, data_type: TYPE_FP16, dims: [4] }]\n");
  server = await startServer({ repository: repo, grpc: true, maxInputBytes: 6 * 1024 * 1024 });
  client = new loaded.inference.GRPCInferenceService(server.grpc!, credentials.createInsecure(), { "grpc.max_send_message_length": -1 });
}, 120_000);
afterAll(async () => {
  client?.close();
  await server?.close();
});

describe("KServe v2 over gRPC", () => {
  it("answers health, server metadata and grpc.health.v1", async () => {
    expect(await call(client, "ServerLive", {})).toEqual({ live: true });
    expect(await call(client, "ServerReady", {})).toEqual({ ready: true });
    const meta = await call(client, "ServerMetadata", {});
    expect(meta.name).toBe("tensorfn");
    expect(meta.extensions).toContain("model_repository");
    const health = new loaded.grpc.health.v1.Health(server.grpc!, credentials.createInsecure());
    expect(await call(health, "Check", { service: "" })).toEqual({ status: "SERVING" });
    expect(await call(health, "Check", { service: "inference.GRPCInferenceService" })).toEqual({ status: "SERVING" });
    await expect(call(health, "Check", { service: "nope" })).rejects.toMatchObject({ code: 5 });
    health.close();
  });

  it("gives model metadata, configuration and readiness, loading on demand", async () => {
    const meta = await call(client, "ModelMetadata", { name: "simple" });
    expect(meta).toMatchObject({ name: "simple", versions: ["1"], platform: "onnxruntime_onnx" });
    expect(meta.inputs).toEqual([
      { name: "INPUT0", datatype: "INT32", shape: [-1, 16] },
      { name: "INPUT1", datatype: "INT32", shape: [-1, 16] },
    ]);
    const { config } = await call(client, "ModelConfig", { name: "simple" });
    expect(config).toMatchObject({ name: "simple", max_batch_size: 8 });
    expect(config.input[0]).toMatchObject({ name: "INPUT0", data_type: "TYPE_INT32", dims: [16] });
    expect(config.parameters.execution_provider.string_value).toBeTruthy();
    expect(await call(client, "ModelReady", { name: "simple" })).toEqual({ ready: true });
    await expect(call(client, "ModelMetadata", { name: "nope" })).rejects.toMatchObject({ code: 5, details: expect.stringMatching(/nope/) });
  });

  it("infers with raw contents and with typed contents alike", async () => {
    const raw = await call(client, "ModelInfer", simpleRaw({ id: "r1" }));
    expect(raw).toMatchObject({ model_name: "simple", model_version: "1", id: "r1" });
    expect(raw.outputs.map((o: Json) => [o.name, o.datatype, o.shape])).toEqual([
      ["OUTPUT0", "INT32", [1, 16]],
      ["OUTPUT1", "INT32", [1, 16]],
    ]);
    expect(readInt32s(raw.raw_output_contents[0])).toEqual(ramp.map((v) => v + 1));
    expect(readInt32s(raw.raw_output_contents[1])).toEqual(ramp.map((v) => v - 1));
    const typed = await call(client, "ModelInfer", {
      model_name: "simple",
      inputs: [
        { name: "INPUT0", datatype: "INT32", shape: [1, 16], contents: { int_contents: ramp } },
        { name: "INPUT1", datatype: "INT32", shape: [1, 16], contents: { int_contents: ones } },
      ],
      outputs: [{ name: "OUTPUT1" }],
    });
    expect(typed.outputs.map((o: Json) => o.name)).toEqual(["OUTPUT1"]);
    expect(readInt32s(typed.raw_output_contents[0])).toEqual(ramp.map((v) => v - 1));
  });

  it("classifies an output asked with the int64 parameter classification (Triton's extension), labelled from its label_filename", async () => {
    const classes = (n: number) => ({ outputs: [{ name: "OUTPUT0", parameters: { classification: { int64_param: n } } }] });
    const answer = await call(client, "ModelInfer", simpleRaw(classes(2)));
    expect(answer.outputs).toMatchObject([{ name: "OUTPUT0", datatype: "BYTES", shape: [1, 2] }]);
    expect(answer.raw_output_contents[0]).toEqual(rawStrings(["16:15:sixteen", "15:14"]));
    const strings = {
      model_name: "simple_string",
      inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "BYTES", shape: [1, 16] })),
      raw_input_contents: [rawStrings(ramp.map(String)), rawStrings(ramp.map(String))],
    };
    await expect(call(client, "ModelInfer", { ...strings, ...classes(1) })).rejects.toMatchObject({ code: 3, details: "class result not available for output 'OUTPUT0' due to unsupported type 'BYTES'" });
    await expect(call(client, "ModelInfer", simpleRaw({ outputs: [{ name: "OUTPUT0", parameters: { classification: { string_param: "2" } } }] }))).rejects.toMatchObject({
      code: 3,
      details: expect.stringMatching(/output 'OUTPUT0' parameter 'classification' must be a number of classes/),
    });
  });

  it("carries BYTES raw (4-byte little-endian lengths) and as bytes_contents, and FP16 raw only", async () => {
    const strings = ramp.map(String);
    const raw = await call(client, "ModelInfer", {
      model_name: "simple_string",
      inputs: [
        { name: "INPUT0", datatype: "BYTES", shape: [1, 16] },
        { name: "INPUT1", datatype: "BYTES", shape: [1, 16] },
      ],
      raw_input_contents: [rawStrings(strings), rawStrings(ones.map(String))],
    });
    expect(raw.raw_output_contents[0]).toEqual(rawStrings(ramp.map((v) => String(v + 1))));
    const typed = await call(client, "ModelInfer", {
      model_name: "simple_string",
      inputs: [
        { name: "INPUT0", datatype: "BYTES", shape: [1, 16], contents: { bytes_contents: strings.map((s) => Buffer.from(s)) } },
        { name: "INPUT1", datatype: "BYTES", shape: [1, 16], contents: { bytes_contents: ones.map((s) => Buffer.from(String(s))) } },
      ],
    });
    expect(typed.raw_output_contents[1]).toEqual(rawStrings(ramp.map((v) => String(v - 1))));

    const half = Buffer.from(new Uint16Array([0x3c00, 0x4000, 0xbc00, 0x7bff]).buffer); // 1, 2, -1, 65504
    const answer = await call(client, "ModelInfer", { model_name: "half", inputs: [{ name: "X", datatype: "FP16", shape: [1, 4] }], raw_input_contents: [half] });
    expect(answer.outputs[0]).toMatchObject({ name: "Y", datatype: "FP16", shape: [1, 4] });
    expect(answer.raw_output_contents[0]).toEqual(half);
    await expect(call(client, "ModelInfer", { model_name: "half", inputs: [{ name: "X", datatype: "FP16", shape: [1, 4], contents: { fp32_contents: [1, 2, 3, 4] } }] })).rejects.toMatchObject({
      code: 3,
      details: expect.stringMatching(/FP16 travels only as raw bytes/),
    });
  });

  it("refuses bad requests with Triton's status codes, naming the field", async () => {
    const refused = (request: Json) => call(client, "ModelInfer", request).then(() => undefined, (e: ServiceError) => [e.code, e.details] as const);
    expect(await refused({ ...simpleRaw(), model_name: "nope" })).toEqual([5, expect.stringMatching(/nope/)]);
    expect(await refused(simpleRaw({ inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 15] }, { name: "INPUT1", datatype: "INT32", shape: [1, 16] }] }))).toEqual([3, expect.stringMatching(/INPUT0/)]);
    expect(await refused(simpleRaw({ raw_input_contents: [int32s(ramp)] }))).toEqual([3, expect.stringMatching(/raw_input_contents has 1 entries for 2 inputs/)]);
    expect(await refused(simpleRaw({ raw_input_contents: [int32s(ramp), int32s([1])] }))).toEqual([3, expect.stringMatching(/INPUT1.*expected 64 bytes/)]);
    expect(await refused(simpleRaw({ inputs: [{ name: "INPUT0", datatype: "INT33", shape: [1, 16] }, { name: "INPUT1", datatype: "INT32", shape: [1, 16] }] }))).toEqual([3, expect.stringMatching(/unknown datatype 'INT33'/)]);
    // Typed contents are counted on the wire before they are decoded; negative INT32s are 10-byte varints.
    const typed = (values: number[]) => ({ model_name: "simple", inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], contents: { int_contents: values } })) });
    expect(await refused(typed(Array(100_000).fill(-1)))).toEqual([3, expect.stringMatching(/INPUT0': int_contents holds 100000 elements for INT32 shape \[1,16\] \(16 expected\)/)]);
    const negatives = await call(client, "ModelInfer", typed(ramp.map((v) => -v - 2_000_000_000)));
    expect(readInt32s(negatives.raw_output_contents[1])).toEqual(ramp.map(() => 0));
    // Beyond gRPC's 4 MiB default, within --max-input-size (6 MiB here): read; beyond it: RESOURCE_EXHAUSTED.
    const big = Buffer.alloc(5 * 1024 * 1024);
    expect(await refused({ model_name: "mlp", inputs: [{ name: "x", datatype: "FP32", shape: [1, 1310720] }], raw_input_contents: [big] })).toEqual([3, expect.stringMatching(/x/)]);
    const [code] = (await refused({ model_name: "mlp", inputs: [{ name: "x", datatype: "FP32", shape: [1, 1835008] }], raw_input_contents: [Buffer.alloc(7 * 1024 * 1024)] }))!;
    expect(code).toBe(8);
    expect(await call(client, "ServerLive", {})).toEqual({ live: true });
  });

  it("streams: many requests in flight, each answered with its id; a failure travels in error_message and the stream goes on", async () => {
    const stream = (client as unknown as { ModelStreamInfer(m?: Metadata): Duplex }).ModelStreamInfer();
    const answers: Json[] = [];
    const done = new Promise<void>((resolve, reject) => {
      stream.on("data", (m: Json) => answers.push(m));
      stream.on("end", resolve);
      stream.on("error", reject);
    });
    for (let i = 0; i < 40; i++) stream.write(simpleRaw({ id: `s${i}`, raw_input_contents: [int32s(ramp.map((v) => v * i)), int32s(ones)] }));
    stream.write({ ...simpleRaw({ id: "bad" }), model_name: "nope" });
    stream.end();
    await done;
    expect(answers).toHaveLength(41);
    const bad = answers.find((a) => a.infer_response.id === "bad")!;
    expect(bad.error_message).toMatch(/nope/);
    for (let i = 0; i < 40; i++) {
      const answer = answers.find((a) => a.infer_response.id === `s${i}`)!;
      expect(answer.error_message).toBe("");
      expect(readInt32s(answer.infer_response.raw_output_contents[0])).toEqual(ramp.map((v) => v * i + 1));
    }
  });

  it("streams with triton_grpc_error: true end at the first failure with its status", async () => {
    const metadata = new Metadata();
    metadata.set("triton_grpc_error", "true");
    const stream = (client as unknown as { ModelStreamInfer(m?: Metadata): Duplex }).ModelStreamInfer(metadata);
    const ended = new Promise<ServiceError>((resolve) => {
      stream.on("data", () => {});
      stream.on("error", resolve);
    });
    stream.write({ ...simpleRaw(), model_name: "nope" });
    expect(await ended).toMatchObject({ code: 5, details: expect.stringMatching(/nope/) });
  });

  it("reports the same statistics as HTTP", async () => {
    const before = (await call(client, "ModelStatistics", { name: "simple" })).model_stats[0];
    for (let i = 0; i < 3; i++) await call(client, "ModelInfer", simpleRaw({ id: `stats${i}` }));
    const http = (await (await fetch(`${server.url}/v2/models/simple/stats`)).json()) as Json;
    const grpc = await call(client, "ModelStatistics", { name: "simple" });
    const [h, g] = [http.model_stats[0], grpc.model_stats[0]];
    expect(g).toMatchObject({ name: "simple", version: "1", inference_count: h.inference_count, execution_count: h.execution_count, last_inference: h.last_inference });
    expect(g.inference_stats.success).toEqual(h.inference_stats.success);
    // Exactly the three calls made here, counted once each (other tests share the server).
    expect(g.inference_stats.success.count - before.inference_stats.success.count).toBe(3);
    expect(g.inference_count - before.inference_count).toBe(3);
  });

  it("indexes, unloads and loads through the repository RPCs", async () => {
    const { models } = await call(client, "RepositoryIndex", {});
    expect(models.map((m: Json) => m.name)).toEqual(expect.arrayContaining(["simple", "simple_string", "mlp", "half"]));
    const unload = { bool_param: true };
    await call(client, "RepositoryModelUnload", { model_name: "simple_string", parameters: { disable: unload } });
    expect(await call(client, "ModelReady", { name: "simple_string" })).toEqual({ ready: false });
    await call(client, "RepositoryModelLoad", { model_name: "simple_string" });
    expect(await call(client, "ModelReady", { name: "simple_string" })).toEqual({ ready: true });
    await expect(call(client, "RepositoryModelLoad", { model_name: "../x" })).rejects.toMatchObject({ code: 3 });
    // No regions yet: status lists none, a clean-up succeeds; an object that does not exist is refused
    // (test/e2e/shared-memory.test.ts registers real ones); CUDA shared memory cannot be registered.
    expect(await call(client, "SystemSharedMemoryStatus", {})).toEqual({ regions: {} });
    expect(await call(client, "CudaSharedMemoryUnregister", {})).toEqual({});
    await expect(call(client, "SystemSharedMemoryRegister", { name: "r", key: "/tensorfn-no-such-object", byte_size: 64 })).rejects.toMatchObject({ code: 3 });
    await expect(call(client, "CudaSharedMemoryRegister", { name: "r", raw_handle: Buffer.alloc(0), device_id: 0, byte_size: 64 })).rejects.toMatchObject({ code: 12 });
  });
});

describe("gRPC access", () => {
  let keyed: TestServer;
  let keyedClient: Client;
  beforeAll(async () => {
    keyed = await startServer({ repository: tempRepository("simple"), grpc: true, apiKeys: ["k-api"], adminKeys: ["k-admin"] });
    keyedClient = new loaded.inference.GRPCInferenceService(keyed.grpc!, credentials.createInsecure());
  }, 120_000);
  afterAll(async () => {
    keyedClient?.close();
    await keyed?.close();
  });
  const bearer = (key: string) => {
    const m = new Metadata();
    m.set("authorization", `Bearer ${key}`);
    return m;
  };

  it("asks for the same keys as HTTP, as authorization metadata; health stays open", async () => {
    expect(await call(keyedClient, "ServerReady", {})).toEqual({ ready: true });
    await expect(call(keyedClient, "ModelInfer", simpleRaw())).rejects.toMatchObject({ code: 16, details: expect.stringMatching(/needs a key/) });
    await expect(call(keyedClient, "ModelInfer", simpleRaw(), bearer("wrong"))).rejects.toMatchObject({ code: 16 });
    expect((await call(keyedClient, "ModelInfer", simpleRaw(), bearer("k-api"))).model_name).toBe("simple");
    await expect(call(keyedClient, "RepositoryIndex", {}, bearer("k-api"))).rejects.toMatchObject({ code: 7, details: expect.stringMatching(/admin key/) });
    expect((await call(keyedClient, "RepositoryIndex", {}, bearer("k-admin"))).models.length).toBe(1);
  });
});

describe("serve --grpc-port", () => {
  it("prints the gRPC address; a shutdown ends an open Watch and an idle stream, and the process exits 0", async () => {
    const { grpcAddress, spawnServer } = await import("../../harness/server-process.ts");
    const { cliEntry, TARGET_RUNTIME } = await import("../../harness/start-server.ts");
    const [command, args] = cliEntry(TARGET_RUNTIME, ["serve", "--repo", tempRepository("simple"), "--port", "0", "--grpc-port", "0"]);
    const spawned = await spawnServer(command, args);
    const address = await grpcAddress(spawned);
    const health = new loaded.grpc.health.v1.Health(address, credentials.createInsecure());
    const watch = (health as unknown as { Watch(r: Json): Duplex }).Watch({ service: "" });
    const statuses: string[] = [];
    const watchEnded = new Promise<void>((resolve) => {
      watch.on("data", (m: Json) => statuses.push(m.status));
      watch.on("end", resolve);
      watch.on("error", () => resolve());
    });
    const grpc = new loaded.inference.GRPCInferenceService(address, credentials.createInsecure());
    const stream = (grpc as unknown as { ModelStreamInfer(): Duplex }).ModelStreamInfer();
    const first = new Promise<Json>((resolve) => stream.once("data", resolve));
    const streamEnded = new Promise<void>((resolve) => {
      stream.on("end", resolve);
      stream.on("error", () => resolve());
    });
    stream.write(simpleRaw({ id: "before" }));
    expect((await first).infer_response.id).toBe("before");
    const started = Date.now();
    expect(await spawned.stop()).toBe(0);
    await Promise.all([watchEnded, streamEnded]);
    expect(Date.now() - started).toBeLessThan(8000);
    expect(statuses[0]).toBe("SERVING");
    health.close();
    grpc.close();
  });
});
