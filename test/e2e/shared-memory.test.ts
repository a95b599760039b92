import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { credentials, loadPackageDefinition, Metadata } from "@grpc/grpc-js";
import type { Client, ServiceError } from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

// Triton's system shared-memory extension through the real server: a POSIX shared-memory object
// (on Linux, what shm_open makes: a file in /dev/shm) registered as regions, inputs read from it and
// outputs written into it, over HTTP and gRPC.

const PROTO = new URL("../../runtime/grpc/proto/", import.meta.url).pathname;
const CONFIG_PROTO = new URL("../../runtime/config/proto/", import.meta.url).pathname;
const definition = loadSync(["grpc_service.proto"], { includeDirs: [PROTO, CONFIG_PROTO], keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true });
const loaded = loadPackageDefinition(definition) as unknown as {
  inference: { GRPCInferenceService: new (address: string, creds: ReturnType<typeof credentials.createInsecure>) => Client };
};
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
function call(client: Client, method: string, request: Json): Promise<Json> {
  return new Promise((resolve, reject) => {
    (client as unknown as Record<string, (r: Json, m: Metadata, cb: (e: ServiceError | null, v: Json) => void) => void>)[method]!(request, new Metadata(), (error, value) => (error ? reject(error) : resolve(value)));
  });
}

const linux = existsSync("/dev/shm");
const tag = `tensorfn-test-${process.pid}`;
const INPUT_KEY = `/${tag}-in`;
const OUTPUT_KEY = `/${tag}-out`;
const LINK_KEY = `/${tag}-link`;
const file = (key: string) => `/dev/shm${key}`;
const ramp = Array.from({ length: 16 }, (_, i) => i);
const int32s = (values: number[]) => Buffer.from(new Int32Array(values).buffer);
const readInt32s = (key: string, offset: number) => [...new Int32Array(new Uint8Array(readFileSync(file(key))).buffer, offset, 16)];

let server: TestServer;
let grpc: Client;
beforeAll(async () => {
  if (!linux) return;
  // INPUT0 = ramp at 0, INPUT1 = 3s at 64; room for two outputs of 64 bytes each.
  writeFileSync(file(INPUT_KEY), Buffer.concat([int32s(ramp), int32s(ramp.map(() => 3))]));
  writeFileSync(file(OUTPUT_KEY), Buffer.alloc(128));
  symlinkSync("/etc/hostname", file(LINK_KEY));
  server = await startServer({ repository: tempRepository("simple", "simple_string"), controlMode: "lazy", grpc: true });
  grpc = new loaded.inference.GRPCInferenceService(server.grpc!, credentials.createInsecure());
}, 120_000);
afterAll(async () => {
  grpc?.close();
  await server?.close();
  for (const key of [INPUT_KEY, OUTPUT_KEY, LINK_KEY]) rmSync(file(key), { force: true });
});

const post = async (path: string, body: object) => {
  const r = await fetch(`${server.url}${path}`, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
  return { status: r.status, json: (await r.json()) as Json };
};
const inShm = (name: string, region: string, offset: number) => ({ name, datatype: "INT32", shape: [1, 16], parameters: { shared_memory_region: region, shared_memory_offset: offset, shared_memory_byte_size: 64 } });
const outShm = (name: string, region: string, offset: number, size = 64) => ({ name, parameters: { shared_memory_region: region, shared_memory_offset: offset, shared_memory_byte_size: size } });

describe.runIf(linux)("system shared memory (Triton's extension)", () => {
  it("is listed in the extensions; regions register, list and unregister over HTTP", async () => {
    expect(((await (await fetch(`${server.url}/v2`)).json()) as { extensions: string[] }).extensions).toContain("system_shared_memory");
    expect((await post("/v2/systemsharedmemory/region/input_data/register", { key: INPUT_KEY, offset: 0, byte_size: 128 })).status).toBe(200);
    expect((await post("/v2/systemsharedmemory/region/output_data/register", { key: OUTPUT_KEY, offset: 0, byte_size: 128 })).status).toBe(200);
    const status = (await (await fetch(`${server.url}/v2/systemsharedmemory/status`)).json()) as Json[];
    expect(status).toEqual([
      { name: "input_data", key: INPUT_KEY, offset: 0, byte_size: 128 },
      { name: "output_data", key: OUTPUT_KEY, offset: 0, byte_size: 128 },
    ]);
    const one = await fetch(`${server.url}/v2/systemsharedmemory/region/output_data/status`);
    expect(await one.json()).toEqual([{ name: "output_data", key: OUTPUT_KEY, offset: 0, byte_size: 128 }]);
  });

  it("reads inputs from a region and writes outputs into one over HTTP; the answer carries their shapes alone", async () => {
    const { status, json } = await post("/v2/models/simple/infer", {
      inputs: [inShm("INPUT0", "input_data", 0), inShm("INPUT1", "input_data", 64)],
      outputs: [outShm("OUTPUT0", "output_data", 0), outShm("OUTPUT1", "output_data", 64)],
    });
    expect(status, json.error).toBe(200);
    expect(json.outputs).toEqual([
      { name: "OUTPUT0", datatype: "INT32", shape: [1, 16] },
      { name: "OUTPUT1", datatype: "INT32", shape: [1, 16] },
    ]);
    expect(readInt32s(OUTPUT_KEY, 0)).toEqual(ramp.map((v) => v + 3));
    expect(readInt32s(OUTPUT_KEY, 64)).toEqual(ramp.map((v) => v - 3));
  });

  it("does the same over gRPC, where raw contents go to the inputs not in shared memory, in order", async () => {
    writeFileSync(file(OUTPUT_KEY), Buffer.alloc(128));
    const status = await call(grpc, "SystemSharedMemoryStatus", { name: "input_data" });
    expect(status.regions).toEqual({ input_data: { name: "input_data", key: INPUT_KEY, offset: 0, byte_size: 128 } });
    const shm = (region: string, offset: number) => ({ shared_memory_region: { string_param: region }, shared_memory_offset: { int64_param: offset }, shared_memory_byte_size: { int64_param: 64 } });
    const answer = await call(grpc, "ModelInfer", {
      model_name: "simple",
      inputs: [
        { name: "INPUT0", datatype: "INT32", shape: [1, 16] },
        { name: "INPUT1", datatype: "INT32", shape: [1, 16], parameters: shm("input_data", 64) },
      ],
      raw_input_contents: [int32s(ramp.map((v) => 10 * v))],
      outputs: [{ name: "OUTPUT0", parameters: shm("output_data", 0) }, { name: "OUTPUT1" }],
    });
    expect(answer.outputs.map((o: Json) => [o.name, o.shape])).toEqual([
      ["OUTPUT0", [1, 16]],
      ["OUTPUT1", [1, 16]],
    ]);
    expect(answer.raw_output_contents[0]).toHaveLength(0);
    expect([...new Int32Array(new Uint8Array(answer.raw_output_contents[1]).buffer)]).toEqual(ramp.map((v) => 10 * v - 3));
    expect(readInt32s(OUTPUT_KEY, 0)).toEqual(ramp.map((v) => 10 * v + 3));
  });

  it("refuses what lies outside a region or does not fit, naming the tensor, before running anything", async () => {
    const input1 = { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: ramp };
    const cases: [object, RegExp][] = [
      [{ inputs: [inShm("INPUT0", "nowhere", 0), input1] }, /input 'INPUT0': Unable to find shared memory region: 'nowhere'/],
      [{ inputs: [inShm("INPUT0", "input_data", 96), input1] }, /input 'INPUT0': shared_memory_offset 96 \+ shared_memory_byte_size 64 runs past the end of region 'input_data' \(128 bytes\)/],
      [{ inputs: [{ ...inShm("INPUT0", "input_data", 0), parameters: { shared_memory_region: "input_data", shared_memory_byte_size: 60 } }, input1] }, /input 'INPUT0': shared_memory_byte_size 60 does not match INT32 shape \[1,16\] \(64 bytes\)/],
      [{ inputs: [{ ...inShm("INPUT0", "input_data", 0), data: ramp }, input1] }, /input 'INPUT0': set only one of data, binary_data_size and shared_memory_region/],
      [{ inputs: [inShm("INPUT0", "input_data", 0), input1], outputs: [outShm("OUTPUT0", "output_data", 0, 32)] }, /shared memory size specified with the request for output 'OUTPUT0' \(32 bytes\) should be at least 64 bytes/],
      [{ inputs: [inShm("INPUT0", "input_data", 0), input1], outputs: [{ name: "OUTPUT0", parameters: { shared_memory_region: "output_data", shared_memory_byte_size: 64, classification: 1 } }] }, /can't set both 'shared_memory_region' and 'classification'/],
    ];
    for (const [body, message] of cases) {
      const { status, json } = await post("/v2/models/simple/infer", body);
      expect(status, JSON.stringify(body)).toBe(400);
      expect(json.error).toMatch(message);
    }
  });

  it("registers only a POSIX shared-memory object inside its bounds: no other path, no link, no duplicate name", async () => {
    const register = (name: string, body: object) => post(`/v2/systemsharedmemory/region/${name}/register`, body);
    const refused: [string, object, number, RegExp][] = [
      ["r1", { key: "/../../etc/passwd", byte_size: 8 }, 400, /is not a shared-memory key/],
      ["r2", { key: "/etc/passwd", byte_size: 8 }, 400, /is not a shared-memory key/],
      ["r3", { key: LINK_KEY, byte_size: 8 }, 400, /cannot be opened \(ELOOP\)/],
      ["r4", { key: `/${tag}-missing`, byte_size: 8 }, 400, /no shared-memory object/],
      ["r5", { key: INPUT_KEY, offset: 100, byte_size: 64 }, 400, /offset 100 \+ byte_size 64 runs past the end of '.*' \(128 bytes\)/],
      ["r6", { key: INPUT_KEY }, 400, /has no 'byte_size' field/],
      ["input_data", { key: INPUT_KEY, byte_size: 8 }, 400, /shared memory region 'input_data' is already registered/],
    ];
    for (const [name, body, status, message] of refused) {
      const answer = await register(name, body);
      expect(answer.status, name).toBe(status);
      expect(answer.json.error, name).toMatch(message);
    }
    expect(((await (await fetch(`${server.url}/v2/systemsharedmemory/status`)).json()) as Json[]).map((r) => r.name)).toEqual(["input_data", "output_data"]);
  });

  it("unregisters one region or all; CUDA shared memory has none to list and cannot be registered", async () => {
    expect((await post("/v2/systemsharedmemory/region/output_data/unregister", {})).status).toBe(200);
    expect((await fetch(`${server.url}/v2/systemsharedmemory/region/output_data/status`)).status).toBe(404);
    await call(grpc, "SystemSharedMemoryUnregister", { name: "" });
    expect(await (await fetch(`${server.url}/v2/systemsharedmemory/status`)).json()).toEqual([]);
    expect(await (await fetch(`${server.url}/v2/cudasharedmemory/status`)).json()).toEqual([]);
    expect((await post("/v2/cudasharedmemory/unregister", {})).status).toBe(200);
    expect((await post("/v2/cudasharedmemory/region/gpu/register", { raw_handle: { b64: "" }, device_id: 0, byte_size: 8 })).status).toBe(501);
    // Once gone, a request naming a region is refused.
    const { status } = await post("/v2/models/simple/infer", { inputs: [inShm("INPUT0", "input_data", 0), inShm("INPUT1", "input_data", 64)] });
    expect(status).toBe(400);
  });
});

describe.runIf(linux)("system shared memory on a server with keys", () => {
  // Two API keys, two clients: a region belongs to the key that registered it.
  const A = "key-a-0123456789";
  const B = "key-b-0123456789";
  const KEY = `/${tag}-owned`;
  let keyed: TestServer;
  let keyedGrpc: Client;
  beforeAll(async () => {
    if (!linux) return;
    writeFileSync(file(KEY), Buffer.concat([int32s(ramp), int32s(ramp.map(() => 3)), Buffer.alloc(128)]));
    keyed = await startServer({ repository: tempRepository("simple"), controlMode: "lazy", grpc: true, apiKeys: [A, B] });
    keyedGrpc = new loaded.inference.GRPCInferenceService(keyed.grpc!, credentials.createInsecure());
  }, 120_000);
  afterAll(async () => {
    keyedGrpc?.close();
    await keyed?.close();
    rmSync(file(KEY), { force: true });
  });
  const as = async (key: string | undefined, method: string, path: string, body?: object) => {
    const headers: Record<string, string> = { "content-type": "application/json", ...(key && { authorization: `Bearer ${key}` }) };
    const r = await fetch(`${keyed.url}${path}`, { method, headers, ...(body && { body: JSON.stringify(body) }) });
    return { status: r.status, json: (await r.json()) as Json };
  };
  const grpcAs = (key: string, method: string, request: Json) => {
    const metadata = new Metadata();
    metadata.set("authorization", `Bearer ${key}`);
    return new Promise<Json>((resolve, reject) =>
      (keyedGrpc as unknown as Record<string, (r: Json, m: Metadata, cb: (e: ServiceError | null, v: Json) => void) => void>)[method]!(request, metadata, (e, v) => (e ? reject(e) : resolve(v))),
    );
  };
  const infer = { inputs: [inShm("INPUT0", "mine", 0), inShm("INPUT1", "mine", 64)], outputs: [outShm("OUTPUT0", "mine", 128)] };

  it("needs a key to register, list or unregister, as inference does", async () => {
    for (const [method, path] of [["POST", "/v2/systemsharedmemory/region/mine/register"], ["GET", "/v2/systemsharedmemory/status"], ["POST", "/v2/systemsharedmemory/unregister"]] as const) {
      const answer = await as(undefined, method, path, method === "POST" ? { key: KEY, byte_size: 256 } : undefined);
      expect(answer.status, path).toBe(401);
    }
    await expect(call(keyedGrpc, "SystemSharedMemoryStatus", { name: "" })).rejects.toMatchObject({ code: 16 }); // UNAUTHENTICATED
  });

  it("lets the key that registered a region use it, and shows another key nothing: its infer, status and unregister read as for a region that does not exist", async () => {
    expect((await as(A, "POST", "/v2/systemsharedmemory/region/mine/register", { key: KEY, byte_size: 256 })).status).toBe(200);
    const own = await as(A, "POST", "/v2/models/simple/infer", infer);
    expect(own.status, own.json.error).toBe(200);
    expect(readInt32s(KEY, 128)).toEqual(ramp.map((v) => v + 3));

    // B: the same answers as for a region nobody registered.
    const theirs = await as(B, "POST", "/v2/models/simple/infer", infer);
    const nobody = await as(B, "POST", "/v2/models/simple/infer", { ...infer, inputs: [inShm("INPUT0", "nowhere", 0), inShm("INPUT1", "nowhere", 64)] });
    expect(theirs.status).toBe(nobody.status);
    expect(theirs.json.error).toBe(nobody.json.error!.replaceAll("nowhere", "mine"));
    const output = await as(B, "POST", "/v2/models/simple/infer", { inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 16], data: ramp }, { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: ramp }], outputs: [outShm("OUTPUT0", "mine", 0)] });
    expect(output.json.error).toMatch(/output 'OUTPUT0': Unable to find shared memory region: 'mine'/);
    expect(await as(B, "GET", "/v2/systemsharedmemory/status")).toEqual({ status: 200, json: [] });
    expect((await as(B, "GET", "/v2/systemsharedmemory/region/mine/status")).status).toBe(404);
    expect((await as(B, "POST", "/v2/systemsharedmemory/region/mine/unregister", {})).status).toBe(200);
    expect((await as(B, "POST", "/v2/systemsharedmemory/unregister", {})).status).toBe(200);
    // Over gRPC alike.
    expect((await grpcAs(B, "SystemSharedMemoryStatus", { name: "" })).regions).toEqual({});
    await grpcAs(B, "SystemSharedMemoryUnregister", { name: "mine" });
    const grpcInfer = grpcAs(B, "ModelInfer", { model_name: "simple", inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 16], parameters: { shared_memory_region: { string_param: "mine" }, shared_memory_byte_size: { int64_param: 64 } } }, { name: "INPUT1", datatype: "INT32", shape: [1, 16] }], raw_input_contents: [int32s(ramp)] });
    await expect(grpcInfer).rejects.toMatchObject({ code: 3, details: expect.stringMatching(/Unable to find shared memory region: 'mine'/) });

    // B's name space is its own; A's region is untouched by all of it.
    expect((await as(B, "POST", "/v2/systemsharedmemory/region/mine/register", { key: KEY, offset: 0, byte_size: 64 })).status).toBe(200);
    expect((await as(A, "GET", "/v2/systemsharedmemory/status")).json).toEqual([{ name: "mine", key: KEY, offset: 0, byte_size: 256 }]);
    expect((await grpcAs(A, "SystemSharedMemoryStatus", { name: "mine" })).regions.mine.byte_size).toBe(256);
    expect((await as(A, "POST", "/v2/models/simple/infer", infer)).status).toBe(200);
  });

  it("holds one key to 64 regions, so that it cannot take every slot from the others", async () => {
    const register = (key: string, name: string) => as(key, "POST", `/v2/systemsharedmemory/region/${name}/register`, { key: KEY, byte_size: 8 });
    const own = ((await as(A, "GET", "/v2/systemsharedmemory/status")).json as unknown[]).length;
    for (let i = own; i < 64; i++) expect((await register(A, `slot${i}`)).status).toBe(200);
    const over = await register(A, "slot64");
    expect(over.status).toBe(413);
    expect(over.json.error).toMatch(/64 shared memory regions are registered with this key/);
    expect((await register(B, "theirs")).status).toBe(200);
    for (const key of [A, B]) expect((await as(key, "POST", "/v2/systemsharedmemory/unregister", {})).status).toBe(200);
    expect((await as(A, "POST", "/v2/systemsharedmemory/region/mine/register", { key: KEY, byte_size: 256 })).status).toBe(200);
  });

  it("refuses a region of no bytes, and answers 400 (not 500) once a region's object shrank under it, growing nothing", async () => {
    const empty = await as(A, "POST", "/v2/systemsharedmemory/region/empty/register", { key: KEY, byte_size: 0 });
    expect(empty.status).toBe(400);
    expect(empty.json.error).toMatch(/'byte_size' must be at least 1/);
    const SHRINKS = `/${tag}-shrinks`;
    writeFileSync(file(SHRINKS), Buffer.alloc(256));
    try {
      expect((await as(A, "POST", "/v2/systemsharedmemory/region/shrinks/register", { key: SHRINKS, byte_size: 256 })).status).toBe(200);
      writeFileSync(file(SHRINKS), Buffer.alloc(0)); // the client truncates its object
      const read = await as(A, "POST", "/v2/models/simple/infer", { inputs: [inShm("INPUT0", "shrinks", 0), inShm("INPUT1", "shrinks", 64)] });
      expect(read.status).toBe(400);
      expect(read.json.error).toMatch(/input 'INPUT0': shared memory region 'shrinks' can no longer be used: .*register it again/);
      const write = await as(A, "POST", "/v2/models/simple/infer", { inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 16], data: ramp }, { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: ramp }], outputs: [outShm("OUTPUT0", "shrinks", 128)] });
      expect(write.status).toBe(400);
      expect(write.json.error).toMatch(/output 'OUTPUT0': shared memory region 'shrinks' can no longer be used: .*now ends at byte 0/);
      expect(readFileSync(file(SHRINKS)).byteLength).toBe(0);
    } finally {
      rmSync(file(SHRINKS), { force: true });
    }
  });
});
