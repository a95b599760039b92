import fc from "fast-check";
import { connect } from "node:http2";
import type { ClientHttp2Session } from "node:http2";
import { fromJson, toBinary } from "@bufbuild/protobuf";
import type { DescMessage, JsonValue } from "@bufbuild/protobuf";
import * as proto from "../runtime/grpc/proto/grpc_service_pb.ts";
import { HealthCheckRequestSchema } from "../runtime/grpc/proto/health_pb.ts";

/**
 * Generators of hostile and careless gRPC calls (test/e2e/fuzz.test.ts, bench/suites/fuzz.ts), sent
 * through a real HTTP/2 connection as a client library would frame them. Each starts from a valid
 * message of a method — in the protobuf JSON mapping — and mutates its fields (datatypes, shapes
 * of any int64, raw contents of the wrong size, parameters of every kind, names, shared-memory
 * references, repository files) or the bytes it encodes to, or sends bytes that are no message.
 *
 * `framed` calls are well-framed gRPC (a length prefix that tells the truth, no compression flag):
 * whatever their message, the answer is a status other than INTERNAL or UNKNOWN. `raw` calls break
 * the framing itself (a prefix that lies, a compressed flag with no encoding, a body cut short);
 * the transport may answer those as it likes, never with a hang, and the server serves on.
 */
export interface GrpcFuzzCase {
  kind: "framed" | "raw";
  path: string;
  /** The HTTP/2 DATA the call sends: one or more length-prefixed messages (or whatever raw calls send). */
  body: Uint8Array;
  metadata: Record<string, string>;
  label: string;
}

/** What came back: the gRPC status (trailers, or headers for a trailers-only answer), or why none came. */
export interface GrpcFuzzOutcome {
  status?: number;
  message?: string;
  /** The stream was reset (RST_STREAM) with this code instead of ending with a status. */
  reset?: number;
  failure?: string;
  ms: number;
}

const S = "/inference.GRPCInferenceService";
const int32Raw = (values: number[]) => Buffer.from(Int32Array.from(values).buffer).toString("base64");
const ramp = Array.from({ length: 16 }, (_, i) => i);

/** Valid calls, by method and message (protobuf JSON), that the mutations start from. `fuzzRegion`: a region the run registered. */
function bases(fuzzRegion: string): Array<{ path: string; schema: DescMessage; json: Record<string, unknown> }> {
  const simple = { modelName: "simple", inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: ["1", "16"] })), rawInputContents: [int32Raw(ramp), int32Raw(ramp)] };
  return [
    { path: `${S}/ModelInfer`, schema: proto.ModelInferRequestSchema, json: simple },
    { path: `${S}/ModelInfer`, schema: proto.ModelInferRequestSchema, json: { modelName: "simple", id: "typed", inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: ["1", "16"], contents: { intContents: ramp } })), outputs: [{ name: "OUTPUT0", parameters: { classification: { int64Param: "2" } } }] } },
    { path: `${S}/ModelInfer`, schema: proto.ModelInferRequestSchema, json: { modelName: "simple_string", inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "BYTES", shape: ["1", "16"], contents: { bytesContents: ramp.map((i) => Buffer.from(String(i)).toString("base64")) } })) } },
    { path: `${S}/ModelInfer`, schema: proto.ModelInferRequestSchema, json: { modelName: "mlp", inputs: [{ name: "input", datatype: "FP32", shape: ["1", "512"], contents: { fp32Contents: Array.from({ length: 512 }, (_, i) => (i % 7) / 7) } }] } },
    { path: `${S}/ModelInfer`, schema: proto.ModelInferRequestSchema, json: { ...simple, rawInputContents: [int32Raw(ramp)], inputs: [simple.inputs[0], { ...simple.inputs[1], parameters: { shared_memory_region: { stringParam: fuzzRegion }, shared_memory_byte_size: { int64Param: "64" } } }], outputs: [{ name: "OUTPUT0", parameters: { shared_memory_region: { stringParam: fuzzRegion }, shared_memory_offset: { int64Param: "64" }, shared_memory_byte_size: { int64Param: "64" } } }] } },
    { path: `${S}/ModelStreamInfer`, schema: proto.ModelInferRequestSchema, json: { ...simple, id: "s1", parameters: { priority: { int64Param: "1" }, timeout: { int64Param: "1000000" } } } },
    { path: `${S}/ModelMetadata`, schema: proto.ModelMetadataRequestSchema, json: { name: "simple", version: "1" } },
    { path: `${S}/ModelConfig`, schema: proto.ModelConfigRequestSchema, json: { name: "mlp" } },
    { path: `${S}/ModelReady`, schema: proto.ModelReadyRequestSchema, json: { name: "simple_identity" } },
    { path: `${S}/ModelStatistics`, schema: proto.ModelStatisticsRequestSchema, json: { name: "simple" } },
    { path: `${S}/ServerLive`, schema: proto.ServerLiveRequestSchema, json: {} },
    { path: `${S}/ServerMetadata`, schema: proto.ServerMetadataRequestSchema, json: {} },
    { path: `${S}/RepositoryIndex`, schema: proto.RepositoryIndexRequestSchema, json: { ready: true } },
    // Names no bundled function has: a case never unloads or replaces one the others use.
    { path: `${S}/RepositoryModelLoad`, schema: proto.RepositoryModelLoadRequestSchema, json: { modelName: "fuzz_upload", parameters: { config: { stringParam: '{"max_batch_size":0}' }, "file:1/model.onnx": { bytesParam: "AAEC" } } } },
    { path: `${S}/RepositoryModelUnload`, schema: proto.RepositoryModelUnloadRequestSchema, json: { modelName: "fuzz_upload", parameters: { unload_dependents: { boolParam: true } } } },
    { path: `${S}/SystemSharedMemoryRegister`, schema: proto.SystemSharedMemoryRegisterRequestSchema, json: { name: "fuzz_other", key: "/tensorfn-fuzz-nowhere", offset: "0", byteSize: "64" } },
    { path: `${S}/SystemSharedMemoryStatus`, schema: proto.SystemSharedMemoryStatusRequestSchema, json: { name: fuzzRegion } },
    { path: `${S}/SystemSharedMemoryUnregister`, schema: proto.SystemSharedMemoryUnregisterRequestSchema, json: { name: "fuzz_other" } },
    { path: `${S}/CudaSharedMemoryRegister`, schema: proto.CudaSharedMemoryRegisterRequestSchema, json: { name: "gpu", deviceId: "0", byteSize: "8" } },
    { path: "/grpc.health.v1.Health/Check", schema: HealthCheckRequestSchema, json: { service: "inference.GRPCInferenceService" } },
  ];
}

/** Values a careless client puts where a field expects something else (proto3 JSON: int64 as strings). */
const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom("0", "-1", "1", "16", "9223372036854775807", "-9223372036854775808", "18446744073709551615", "4294967296", "2147483648", "", "INT32", "BYTES", "FP16", "BF16", "int32", "TYPE_FP32", "UNKNOWN", "\u0000", "../etc/passwd", "/dev/shm/x", "simple", "mlp", "fuzz_region"),
  fc.integer({ min: -5, max: 70 }),
  fc.constantFrom(true, false, null, [], {}, ["1", "2"], [int32Raw([1])], [""], "AAAA", "////"),
  fc.array(fc.constantFrom("0", "1", "16", "512", "-1", "9223372036854775807"), { maxLength: 6 }),
  fc.record({ int64Param: fc.constantFrom("0", "-1", "9223372036854775807") }),
  fc.record({ stringParam: fc.string({ maxLength: 12 }) }),
  fc.record({ boolParam: fc.boolean() }),
  fc.record({ doubleParam: fc.double() }),
  fc.record({ uint64Param: fc.constantFrom("0", "18446744073709551615") }),
);

const EXTRA_KEYS = ["datatype", "shape", "name", "parameters", "contents", "rawInputContents", "inputs", "outputs", "id", "modelName", "modelVersion", "key", "offset", "byteSize", "intContents", "bytesContents", "fp32Contents", "int64Contents"];

/** One structural edit at a random path of a JSON message: replace, drop, double or empty a node. */
function mutate(value: unknown, path: number[], action: number, replacement: unknown): unknown {
  if (path.length === 0 || value === null || typeof value !== "object") {
    if (action % 4 === 1 && Array.isArray(value)) return [...value, ...value];
    if (action % 4 === 2 && Array.isArray(value)) return value.slice(0, Math.floor(value.length / 2));
    return replacement;
  }
  const [choice, ...rest] = path;
  if (Array.isArray(value)) {
    if (value.length === 0) return [replacement];
    const copy = [...value];
    const i = choice! % copy.length;
    if (rest.length === 0 && action % 5 === 4) copy.splice(i, 1);
    else copy[i] = mutate(copy[i], rest, action, replacement);
    return copy;
  }
  const keys = Object.keys(value as object);
  const key = choice! % (keys.length + 1) < keys.length ? keys[choice! % (keys.length + 1)]! : EXTRA_KEYS[choice! % EXTRA_KEYS.length]!;
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  if (rest.length === 0 && action % 5 === 4) delete copy[key];
  else copy[key] = mutate(copy[key], rest, action, replacement);
  return copy;
}

/** `bytes` with a few bytes flipped, dropped or inserted. */
function damage(bytes: Uint8Array, edits: Array<{ at: number; byte: number; op: number }>): Uint8Array {
  let out = Array.from(bytes);
  for (const { at, byte, op } of edits) {
    const i = out.length === 0 ? 0 : at % out.length;
    if (op === 0) out[i] = byte;
    else if (op === 1) out.splice(i, 1);
    else out.splice(i, 0, byte);
  }
  return Uint8Array.from(out);
}

/** A length-prefixed gRPC message (uncompressed). */
export function frame(message: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + message.byteLength);
  new DataView(out.buffer).setUint32(1, message.byteLength);
  out.set(message, 5);
  return out;
}

/** The calls the fuzzers send: mutated messages of every method, some byte-damaged, some streams of several, some raw framing. */
export function grpcCase(fuzzRegion: string): fc.Arbitrary<GrpcFuzzCase> {
  const all = bases(fuzzRegion);
  const message = fc
    .record({
      base: fc.nat({ max: all.length - 1 }),
      edits: fc.array(fc.record({ path: fc.array(fc.nat({ max: 40 }), { maxLength: 5 }), action: fc.nat({ max: 19 }), value: oddValue }), { maxLength: 3 }),
      bytes: fc.option(fc.array(fc.record({ at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }), op: fc.nat({ max: 2 }) }), { minLength: 1, maxLength: 4 }), { freq: 4 }),
    })
    .map(({ base, edits, bytes }) => {
      const b = all[base]!;
      let json: unknown = b.json;
      for (const e of edits) json = mutate(json, e.path, e.action, e.value);
      let encoded: Uint8Array;
      let how = edits.length ? "mutated" : "valid";
      try {
        encoded = toBinary(b.schema, fromJson(b.schema, json as JsonValue));
      } catch {
        // JSON the mapping refuses (a string where a list goes): the valid message, then damaged below.
        encoded = toBinary(b.schema, fromJson(b.schema, b.json as JsonValue));
        how = "valid";
      }
      if (bytes) {
        encoded = damage(encoded, bytes);
        how += "+bytes";
      }
      return { path: b.path, encoded, label: `${b.path.split("/").pop()} ${how} ${JSON.stringify(json).slice(0, 100)}` };
    });
  const framed = fc
    // Metadata as gRPC defines it (a grpc-timeout that is not `\d{1,8}[HMSmun]` is the transport's to refuse: raw calls send those).
    .record({ messages: fc.array(message, { minLength: 1, maxLength: 3 }), metadata: fc.record(
        { triton_grpc_error: fc.constantFrom("true", "false", "yes"), authorization: fc.constantFrom("Bearer x", "Basic y", ""), "grpc-timeout": fc.constantFrom("1S", "0m", "99999999H", "5u", "100n"), "x-any": fc.string({ maxLength: 8 }).filter((v) => /^[\x21-\x7e]*$/.test(v)) },
        { requiredKeys: [] },
      ) })
    .map(({ messages, metadata }) => {
      // A unary method takes one message; only ModelStreamInfer sends several.
      const stream = messages[0]!.path.endsWith("ModelStreamInfer");
      const sent = stream ? messages.filter((m) => m.path === messages[0]!.path) : [messages[0]!];
      const body = Buffer.concat(sent.map((m) => frame(m.encoded)));
      return { kind: "framed" as const, path: messages[0]!.path, body, metadata: metadata as Record<string, string>, label: sent.map((m) => m.label).join(" | ") };
    });
  const path = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...new Set(all.map((b) => b.path))) },
    fc.constantFrom(`${S}/Nope`, "/inference.GRPCInferenceService/", "/", "/x/y", `${S}/ModelInfer/extra`, "/inference.GRPCInferenceService/Trace"),
  );
  const raw = fc
    .record({
      path,
      payload: fc.uint8Array({ maxLength: 2048 }),
      framing: fc.constantFrom("lie-long", "lie-short", "compressed", "cut", "none", "two-prefixes", "empty", "bad-timeout"),
    })
    .map(({ path, payload, framing }) => {
      let body: Uint8Array;
      if (framing === "none") body = payload;
      else if (framing === "empty") body = new Uint8Array();
      else {
        const f = frame(payload);
        const view = new DataView(f.buffer);
        if (framing === "lie-long") view.setUint32(1, payload.byteLength + 100);
        if (framing === "lie-short") view.setUint32(1, Math.max(0, payload.byteLength - 3));
        if (framing === "compressed") f[0] = 1;
        body = framing === "cut" ? f.subarray(0, Math.max(1, f.byteLength - 2)) : framing === "two-prefixes" ? Buffer.concat([f, f.subarray(0, 3)]) : f;
      }
      const metadata: Record<string, string> = framing === "bad-timeout" ? { "grpc-timeout": "junk" } : {};
      return { kind: "raw" as const, path, body: framing === "bad-timeout" ? frame(payload) : body, metadata, label: `raw ${framing} ${path} (${payload.byteLength} bytes)` };
    });
  return fc.oneof({ weight: 9, arbitrary: framed }, { weight: 1, arbitrary: raw });
}

/** Sends one call over `session` and waits at most `timeoutMs` for its status. */
export function sendGrpcCase(session: ClientHttp2Session, c: GrpcFuzzCase, timeoutMs: number): Promise<GrpcFuzzOutcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    let status: number | undefined;
    let message: string | undefined;
    const done = (o: Omit<GrpcFuzzOutcome, "ms">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...o, ms: performance.now() - started });
    };
    let stream: ReturnType<ClientHttp2Session["request"]>;
    try {
      stream = session.request({ ":method": "POST", ":path": c.path, "content-type": "application/grpc", te: "trailers", ...c.metadata });
    } catch (error) {
      return done({ failure: `could not start the call: ${(error as Error).message}` });
    }
    const timer = setTimeout(() => {
      stream.close();
      done({ failure: "timeout" });
    }, timeoutMs);
    const read = (headers: Record<string, unknown>) => {
      if (headers["grpc-status"] !== undefined) {
        status = Number(headers["grpc-status"]);
        message = decodeURIComponent(String(headers["grpc-message"] ?? ""));
      }
    };
    stream.on("response", read);
    stream.on("trailers", read);
    stream.on("data", () => {});
    stream.on("error", () => {});
    stream.on("close", () => (status !== undefined ? done({ status, message }) : done({ reset: stream.rstCode ?? 0 })));
    stream.end(c.body);
  });
}

/** gRPC's INTERNAL and UNKNOWN: the server failed, not the request. */
const FAILURES = new Set([2, 13]);

/**
 * The property every call must hold; returns why it does not, or undefined. An answer in time (no
 * hang); a framed call ends with a status that is not INTERNAL or UNKNOWN (any refusal of a bad
 * message is INVALID_ARGUMENT, NOT_FOUND, RESOURCE_EXHAUSTED…), never a reset without one. A raw
 * call may be refused by the transport however it likes (its framing is broken).
 */
export function grpcViolation(c: GrpcFuzzCase, o: GrpcFuzzOutcome): string | undefined {
  if (o.failure) return o.failure === "timeout" ? `no status within the timeout (${Math.round(o.ms)} ms): a hang` : o.failure;
  if (c.kind === "raw") return undefined;
  if (o.status === undefined) return `the stream was reset (code ${o.reset}) without a status`;
  if (FAILURES.has(o.status)) return `status ${o.status === 13 ? "INTERNAL" : "UNKNOWN"}: ${o.message?.slice(0, 300)}`;
  return undefined;
}

/** A connection to the gRPC port, errors swallowed (a session the server closes is replaced by the caller). */
export function grpcSession(address: string): ClientHttp2Session {
  const session = connect(`http://${address}`);
  session.on("error", () => {});
  return session;
}

/** A short, reproducible description of a call. */
export function describeGrpcCase(c: GrpcFuzzCase): string {
  return [c.label, `${c.path} ${JSON.stringify(c.metadata)}`, `body (${c.body.byteLength} bytes) base64: ${Buffer.from(c.body.subarray(0, 3000)).toString("base64")}`].join("\n  ");
}
