import fc from "fast-check";
import { deflateSync, gzipSync } from "node:zlib";
import { encodeBinaryTensor } from "../runtime/tensor/mod.ts";
import { chunk, idat, ihdr, pack, png } from "./png-chunks.ts";
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FUNCTIONS } from "./repositories.ts";

/**
 * Generators of hostile and careless HTTP requests for the bundled functions (test/e2e/fuzz.test.ts,
 * bench/suites/fuzz.ts). Each case starts from a valid request and mutates its body, headers or path, so
 * most cases get past the first check and reach the decoder, the scheduler and the model.
 *
 * Two kinds of case: `framed` ones are well-formed HTTP/1.1 (sent through an undici Pool, so the
 * body length always matches) and must be answered by the app with a JSON error; `raw` ones are
 * written byte for byte to a socket (odd bytes in the path, Content-Length that lies) and may be
 * refused by the HTTP parser of the runtime underneath, but never with a 5xx and never by crashing.
 */
export interface FuzzRequest {
  kind: "framed" | "raw";
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Uint8Array;
  /** raw only: the Content-Length header to declare, whatever the body's size. */
  declaredLength?: string;
  /** A one-line label of the generator that made the case, for the failure report. */
  label: string;
}

/**
 * The repository the fuzzer serves: a copy of the bundled functions, with the response cache on
 * for `simple_identity` and the `simple_twice` ensemble (start the server with a `cacheSize`), so
 * cases with odd parameters reach the cache's keys as well as the model. The copy lies inside the
 * project (.test-repositories/, ignored by git; not under node_modules, where Deno will not strip
 * types), so its handlers resolve the project's packages (fflate) as the bundled ones do;
 * `remove()` deletes it.
 */
export function fuzzRepository(): { path: string; remove(): void } {
  const cache = join(FUNCTIONS, "..", ".test-repositories");
  mkdirSync(cache, { recursive: true });
  const path = mkdtempSync(join(cache, "tensorfn-fuzz-"));
  for (const entry of readdirSync(FUNCTIONS, { withFileTypes: true })) {
    if (entry.isDirectory()) cpSync(join(FUNCTIONS, entry.name), join(path, entry.name), { recursive: true });
  }
  for (const name of ["simple_identity", "simple_twice"]) appendFileSync(join(path, name, "function.yaml"), "\nresponse_cache: { enable: true }\n");
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** Bodies stay under this in CI (the brief: ≤ 64 KiB). */
export const MAX_FUZZ_BODY = 64 * 1024;

/** Function names that exist in the bundled repository and must never be unloaded by a case. */
export const KNOWN_FUNCTIONS = ["simple", "simple_string", "simple_identity", "mlp"] as const;

const utf8 = new TextEncoder();
const range = <T = number>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));

/** The canonical `simple` request and its known answer (OUTPUT0 = a + b, OUTPUT1 = a − b). */
export const SIMPLE_REQUEST = {
  inputs: [
    { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: range(16, (i) => i) },
    { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: range(16, () => 1) },
  ],
};
export const SIMPLE_OUTPUT0 = range(16, (i) => i + 1);
export const SIMPLE_OUTPUT1 = range(16, (i) => i - 1);

interface Base {
  fn: string;
  json: Record<string, unknown>;
  /** Binary section for binary-extension bases (the JSON carries binary_data_size). */
  binary?: Uint8Array;
}

function int32Bytes(values: number[]): Uint8Array {
  return new Uint8Array(Int32Array.from(values).buffer);
}

/** BYTES elements in the binary extension's layout, by the server's own encoder. */
function bytesElements(strings: string[]): Uint8Array {
  return encodeBinaryTensor({ datatype: "BYTES", shape: [strings.length], data: strings.map((x) => utf8.encode(x)) });
}

const strings16 = range(16, (i) => String(i));
const mlpInput = range(512, (i) => ((i * 37) % 100) / 100);

/** Valid requests, one per function and encoding, that the mutations start from. */
const BASES: Base[] = [
  { fn: "simple", json: SIMPLE_REQUEST },
  {
    fn: "simple",
    json: {
      inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], parameters: { binary_data_size: 64 } })),
      outputs: [{ name: "OUTPUT0", parameters: { binary_data: true } }, { name: "OUTPUT1" }],
    },
    binary: new Uint8Array([...int32Bytes(range(16, (i) => i)), ...int32Bytes(range(16, () => 1))]),
  },
  {
    fn: "simple_string",
    json: { inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "BYTES", shape: [1, 16], data: strings16 })) },
  },
  {
    fn: "simple_identity",
    json: { inputs: [{ name: "INPUT0", datatype: "BYTES", shape: [1, 3], parameters: { binary_data_size: 0 } }], parameters: { binary_data_output: true } },
    binary: bytesElements(["a", "", "héllo"]),
  },
  { fn: "simple_identity", json: { inputs: [{ name: "INPUT0", datatype: "BYTES", shape: [1, 2], data: ["x", "yz"] }] } },
  { fn: "mlp", json: { inputs: [{ name: "input", datatype: "FP32", shape: [1, 512], data: mlpInput }] } },
];
// binary_data_size of the identity base is the size of its binary section.
((BASES[3]!.json.inputs as Array<{ parameters: Record<string, number> }>)[0]!).parameters.binary_data_size = BASES[3]!.binary!.byteLength;

const DATATYPES = ["BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32", "INT64", "FP16", "FP32", "FP64", "BF16", "BYTES", "int32", "", "TYPE_FP32"];

/** Numbers a careless client sends where a count, a dimension or a length is expected. */
const oddNumber = fc.oneof(
  fc.integer({ min: -3, max: 70 }),
  fc.constantFrom(0, -1, 2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 53, -(2 ** 53), 1e300, -0, 0.5, 1e-9),
  fc.double(),
);
const oddJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: oddNumber },
  fc.constantFrom(null, true, false, "", "0", "16", "NaN", "Infinity", [], {}, [[]], [null], ["a"], { "": 1 }, "\u0000", "𝕏"),
  fc.jsonValue({ maxDepth: 3 }),
);

type Json = unknown;

/** One structural mutation of a JSON value at a random path: replace, delete, duplicate or wrap a node. */
function mutateJson(value: Json, pathChoices: number[], action: number, replacement: Json): Json {
  if (pathChoices.length === 0 || value === null || typeof value !== "object") {
    switch (action % 5) {
      case 0:
        return replacement;
      case 1:
        return [value];
      case 2:
        return Array.isArray(value) ? [...value, ...value] : value;
      case 3:
        return Array.isArray(value) ? value.slice(0, Math.floor(value.length / 2)) : replacement;
      default:
        return typeof value === "number" ? -value : replacement;
    }
  }
  const [choice, ...rest] = pathChoices;
  if (Array.isArray(value)) {
    if (value.length === 0) return mutateJson(replacement, [], action, replacement);
    const i = choice! % value.length;
    const copy = [...value];
    if (rest.length === 0 && action % 7 === 6) copy.splice(i, 1);
    else copy[i] = mutateJson(copy[i], rest, action, replacement);
    return copy;
  }
  const keys = Object.keys(value as object);
  const extra = ["datatype", "shape", "data", "name", "parameters", "binary_data_size", "outputs", "inputs", "id", "__proto__", "constructor"];
  const key = choice! % (keys.length + 2) < keys.length ? keys[choice! % (keys.length + 2)]! : extra[choice! % extra.length]!;
  const copy: Record<string, Json> = { ...(value as Record<string, Json>) };
  if (rest.length === 0 && action % 7 === 6) delete copy[key];
  else copy[key] = mutateJson(copy[key], rest, action, replacement);
  return copy;
}

/** Targeted edits that reach the datatype, shape and size checks rather than the JSON parser. */
const targetedEdit = fc.oneof(
  fc.record({ field: fc.constant("datatype" as const), value: fc.constantFrom(...DATATYPES) }),
  fc.record({ field: fc.constant("shape" as const), value: fc.array(oddNumber, { maxLength: 5 }) }),
  fc.record({ field: fc.constant("binary_data_size" as const), value: oddNumber }),
  fc.record({ field: fc.constant("data" as const), value: fc.oneof(fc.array(oddJson, { maxLength: 40 }), oddJson) }),
  fc.record({ field: fc.constant("name" as const), value: fc.oneof(fc.constantFrom("INPUT0", "INPUT1", "input", "OUTPUT0", ""), fc.string({ maxLength: 20 })) }),
);

function applyTargeted(json: Record<string, unknown>, which: number, edit: { field: string; value: unknown }): Record<string, unknown> {
  const inputs = Array.isArray(json.inputs) ? [...(json.inputs as Record<string, unknown>[])] : [];
  if (inputs.length === 0) return json;
  const i = which % inputs.length;
  const input = { ...inputs[i]! };
  if (edit.field === "binary_data_size") input.parameters = { ...(input.parameters as object), binary_data_size: edit.value };
  else input[edit.field] = edit.value;
  inputs[i] = input;
  return { ...json, inputs };
}

/** Byte-level damage to an encoded body: flip, insert, delete, truncate, extend. */
const byteDamage = fc.array(
  fc.record({ op: fc.constantFrom("flip", "insert", "delete", "truncate", "extend"), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }), n: fc.integer({ min: 1, max: 64 }) }),
  { minLength: 1, maxLength: 4 },
);

function damage(bytes: Uint8Array, edits: Array<{ op: string; at: number; byte: number; n: number }>): Uint8Array {
  let out = bytes;
  for (const e of edits) {
    const at = out.byteLength === 0 ? 0 : e.at % out.byteLength;
    if (e.op === "flip" && out.byteLength > 0) {
      out = out.slice();
      out[at] = e.byte;
    } else if (e.op === "insert") out = new Uint8Array([...out.subarray(0, at), ...new Array(e.n).fill(e.byte), ...out.subarray(at)]);
    else if (e.op === "delete") out = new Uint8Array([...out.subarray(0, at), ...out.subarray(at + e.n)]);
    else if (e.op === "truncate") out = out.subarray(0, at);
    else if (e.op === "extend") out = new Uint8Array([...out, ...new Array(e.n * 16).fill(e.byte)]);
  }
  return out.byteLength > MAX_FUZZ_BODY ? out.subarray(0, MAX_FUZZ_BODY) : out;
}

/** An inference body: valid, structurally mutated, targeted, or byte-damaged; JSON or binary. */
const inferBody = fc
  .record({
    base: fc.nat({ max: BASES.length - 1 }),
    mode: fc.constantFrom("valid", "structural", "targeted", "targeted", "bytes", "amplify"),
    path: fc.array(fc.nat(), { minLength: 0, maxLength: 5 }),
    action: fc.nat(),
    replacement: oddJson,
    targeted: targetedEdit,
    which: fc.nat(),
    damage: byteDamage,
    ihcl: fc.oneof(
      { weight: 6, arbitrary: fc.constant("exact") },
      fc.constantFrom("0", "", " ", "-1", "abc", "1e3", "0x10", "99999999999999999999", "18446744073709551616", "4294967296", " 12", "+5"),
      fc.integer({ min: -8, max: 8 }).map((d) => `delta:${d}`),
    ),
    asBinary: fc.boolean(),
    amplify: fc.record({ count: fc.integer({ min: 1, max: 15000 }), what: fc.constantFrom('""', "0", "1e308", "[]", "null", '"\\u0000"') }),
  })
  .map(({ base, mode, path, action, replacement, targeted, which, damage: edits, ihcl, asBinary, amplify }) => {
    const b = BASES[base]!;
    let json: Record<string, unknown> = b.json;
    if (mode === "structural") json = mutateJson(json, path, action, replacement) as Record<string, unknown>;
    if (mode === "targeted") json = applyTargeted(json, which, targeted);
    let text = JSON.stringify(json) ?? "null";
    if (mode === "amplify") {
      // Many tiny elements in a small body (issue 10, defect 1, scaled down to ≤ 64 KiB).
      const data = `[${new Array(amplify.count).fill(amplify.what).join(",")}]`;
      const dt = amplify.what.startsWith('"') ? "BYTES" : "INT64";
      text = `{"inputs":[{"name":"INPUT0","datatype":"${dt}","shape":[${amplify.count}],"data":${data}}]}`;
    }
    let header: Uint8Array = utf8.encode(text);
    const binary = b.binary && mode !== "amplify" ? b.binary : asBinary ? new Uint8Array(0) : undefined;
    let body: Uint8Array = binary ? new Uint8Array([...header, ...binary]) : header;
    if (mode === "bytes") {
      const damaged = damage(body, edits);
      body = damaged;
      header = damaged.subarray(0, Math.min(header.byteLength, damaged.byteLength));
    }
    let headerLength: string | undefined;
    if (binary || asBinary) {
      if (ihcl === "exact") headerLength = String(header.byteLength);
      else if (ihcl.startsWith("delta:")) headerLength = String(header.byteLength + Number(ihcl.slice(6)));
      else headerLength = ihcl;
    }
    return { fn: b.fn, body: body.byteLength > MAX_FUZZ_BODY ? body.subarray(0, MAX_FUZZ_BODY) : body, headerLength, label: `${b.fn}/${binary ? "binary" : "json"}/${mode}` };
  });

/** A raw binary request (Inference-Header-Content-Length: 0) of a random size to a single-input function. */
const rawBinaryBody = fc
  .record({ fn: fc.constantFrom("mlp", "simple_identity", "simple"), size: fc.oneof(fc.constantFrom(0, 1, 3, 2048, 2047, 2052, 4096), fc.nat({ max: 8192 })), fill: fc.integer({ min: 0, max: 255 }) })
  .map(({ fn, size, fill }) => ({ fn, body: new Uint8Array(size).fill(fill), headerLength: "0", label: `${fn}/raw-binary/${size}` }));

/** Names and version segments that are odd in every way a path segment can be. */
export const oddName = fc.oneof(
  fc.constantFrom("..", ".", "%2e%2e", "%2E%2E%2F..", "simple%2F..", "simple%00", "%00", "%", "%zz", "%E2%82", "simple%20", "SIMPLE", "simple.", ".hidden", "a%2Fb", "con", "__proto__", "constructor", "stats", "-1", "simple;x", "simple?x=1", "simple#x"),
  fc.string({ minLength: 1, maxLength: 40 }).map((s) => encodeURIComponent(s)),
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 }).map((s) => encodeURIComponent(s)),
  fc.integer({ min: 200, max: 9000 }).map((n) => "a".repeat(n)),
  fc.stringMatching(/^[A-Za-z0-9_.-]{1,30}$/),
);
const versionSegment = fc.oneof(fc.constantFrom("1", "0", "01", "2", "99999999999999999999", "18446744073709551616", "-1", "1.0", "%31", ""), fc.nat().map(String));

const functionName = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...KNOWN_FUNCTIONS, "resnet", "ocr_cls", "simple_twice", "word_count", "ocr", "ocr_prepare", "ocr_ensemble") }, { weight: 2, arbitrary: oddName });

const modelPath = fc
  .record({ name: functionName, version: fc.option(versionSegment, { freq: 3 }), tail: fc.constantFrom("/infer", "/infer", "/infer", "", "/ready", "/config", "/stats", "/infer/", "//infer", "/versions", "/INFER") })
  .map(({ name, version, tail }) => `/v2/models/${name}${version === null ? "" : `/versions/${version}`}${tail}`);

const otherPath = fc.oneof(
  fc.constantFrom("/v2", "/v2/", "/v2/health/live", "/v2/health/ready", "/v2/models/stats", "/metrics", "/v2/trace", "/v2/trace?seconds=-1", "/v2/trace?seconds=1e308", "/v2/trace?seconds=abc", "/", "/favicon.ico", "/v2/repository/index", "/v2/dashboard/snapshot", "/v2/../v2/health/live", "/v2/%2e%2e/etc/passwd", "//v2//models", "/v2/models/simple/infer?" + "q=".repeat(500)),
  fc.webPath({ size: "small" }).map((p) => (p.startsWith("/") ? p : `/${p}`)),
  fc.array(oddName, { minLength: 1, maxLength: 4 }).map((s) => `/v2/${s.join("/")}`),
);

/** Repository control routes with names that do not exist (no case may unload or replace a bundled function). */
const repositoryPath = fc
  .record({ name: oddName.filter((n) => !(KNOWN_FUNCTIONS as readonly string[]).includes(n) && !["resnet", "ocr_cls", "simple_twice", "word_count", "ocr", "ocr_det", "ocr_rec", "ocr_prepare", "ocr_boxes", "ocr_lines", "ocr_decode", "ocr_ensemble"].includes(n)), action: fc.constantFrom("load", "unload", "park") })
  .map(({ name, action }) => `/v2/repository/models/${name}/${action}`);

const contentType = fc.oneof(
  { weight: 5, arbitrary: fc.constant(undefined) },
  { weight: 5, arbitrary: fc.constant("application/json") },
  fc.constantFrom("application/octet-stream", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json; charset=utf-16", "", "*/*", "application/json, text/plain"),
  fc.string({ maxLength: 30 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
);
const contentEncoding = fc.oneof(
  { weight: 10, arbitrary: fc.constant(undefined) },
  fc.constantFrom("gzip", "deflate", "br", "identity", "gzip, gzip", "GZIP", "x-gzip", "compress", "zstd", " gzip ", "gzip;q=1"),
);

/** Extra headers that should be ignored or refused, never crash anything. */
const extraHeaders = fc.dictionary(
  fc.constantFrom("accept", "accept-encoding", "x-request-id", "x-tensorfn-key", "priority", "timeout", "origin", "authorization", "te", "inference-header-content-length", "x-forwarded-for", "transfer-encoding"),
  fc.oneof(fc.constantFrom("gzip", "deflate", "br", "*", "identity;q=0", "null", "http://evil.example", "Bearer x", "100-continue", "trailers", "chunked", "-1", "1e999"), fc.string({ maxLength: 20 }).filter((s) => /^[\x20-\x7e]*$/.test(s) && s.trim() === s)),
  { maxKeys: 3 },
);

/**
 * PNGs an untrusted client sends the OCR functions: a header that lies (any bit depth, colour type,
 * interlace, size), palettes of any length with indices past their end, transparency chunks of
 * any size, ancillary chunks that inflate far (a colour profile of zeros), unknown critical
 * chunks, image data cut short or run long. Built chunk by chunk, at most 64 KiB.
 */
const PROFILE_OF_ZEROS = deflateSync(new Uint8Array(16 << 20), { level: 9 }); // 16 MB inflated from ~16 kB
const hostilePng = fc
  .record({
    width: fc.oneof(fc.integer({ min: 1, max: 24 }), fc.constantFrom(0, 100_000, 2 ** 31)),
    height: fc.oneof(fc.integer({ min: 1, max: 24 }), fc.constantFrom(0, 100_000)),
    depth: fc.constantFrom(1, 2, 4, 8, 16, 0, 3, 255),
    colorType: fc.constantFrom(0, 2, 3, 4, 6, 1, 5, 7),
    interlace: fc.constantFrom(0, 0, 1, 2),
    palette: fc.option(fc.integer({ min: 0, max: 300 }), { freq: 2 }),
    transparency: fc.option(fc.integer({ min: 0, max: 300 }), { freq: 4 }),
    profile: fc.boolean(),
    extra: fc.constantFrom("none", "none", "tEXt", "zTXt", "ABCD", "IHDR", "IEND-early"),
    rows: fc.integer({ min: -3, max: 3 }),
    fill: fc.integer({ min: 0, max: 255 }),
    target: fc.constantFrom("function", "ensemble"),
  })
  .map(({ width, height, depth, colorType, interlace, palette, transparency, profile, extra, rows, fill, target }) => {
    const channels = ({ 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 } as Record<number, number>)[colorType] ?? 1;
    const w = Math.min(width, 24);
    const h = Math.max(0, Math.min(height, 24) + rows);
    const row = pack(new Array(w * channels).fill(fill % (depth > 0 && depth < 8 ? 1 << depth : 256)), depth === 16 || depth === 8 || depth < 8 ? (depth || 8) : 8);
    const chunks = [ihdr(width, height, depth, colorType, interlace)];
    if (profile) chunks.push(chunk("iCCP", new Uint8Array([105, 99, 99, 0, 0, ...PROFILE_OF_ZEROS])));
    if (palette !== null) chunks.push(chunk("PLTE", new Uint8Array(palette * 3).fill(fill)));
    if (transparency !== null) chunks.push(chunk("tRNS", new Uint8Array(transparency).fill(fill)));
    if (extra === "tEXt" || extra === "zTXt" || extra === "ABCD" || extra === "IHDR") chunks.push(chunk(extra, new Uint8Array(8)));
    if (extra === "IEND-early") chunks.push(chunk("IEND", new Uint8Array()));
    chunks.push(idat(new Array(h).fill(row)));
    const bytes = png(...chunks).subarray(0, MAX_FUZZ_BODY);
    return { bytes, label: `png ${width}×${height} depth ${depth} type ${colorType}${interlace ? " interlaced" : ""}${palette !== null ? ` plte ${palette}` : ""}${profile ? " iCCP" : ""} ${extra} → ${target}`, target };
  });

/** Requests to an ensemble (simple_twice) with the parameters a step condition or the cache may read. */
const ensembleCall = fc
  .record({
    parameters: fc.dictionary(fc.constantFrom("priority", "timeout", "binary_data_output", "force", "sequence_id", ""), fc.oneof(oddNumber, fc.boolean(), fc.string({ maxLength: 10 })), { maxKeys: 3 }),
    a: fc.integer({ min: -5, max: 5 }),
  })
  .map(({ parameters, a }) => ({
    body: utf8.encode(JSON.stringify({ inputs: ["A", "B"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: range(16, () => a) })), parameters })),
    label: `simple_twice parameters ${JSON.stringify(parameters).slice(0, 60)}`,
  }));

/**
 * The POSIX shared-memory object the fuzzers register as `FUZZ_REGION` (256 bytes: INPUT0's ramp
 * and INPUT1's ones for `simple`, then room for its outputs), so shared-memory cases reach the
 * region's reads and writes; `remove()` deletes it. Undefined where there is no /dev/shm.
 */
export function fuzzSharedMemory(): { key: string; remove(): void } | undefined {
  if (!existsSync("/dev/shm")) return undefined;
  const key = FUZZ_SHM_KEY;
  const bytes = new Uint8Array(256);
  bytes.set(new Uint8Array(Int32Array.from(range(16, (i) => i)).buffer), 0);
  bytes.set(new Uint8Array(Int32Array.from(range(16, () => 1)).buffer), 64);
  writeFileSync(`/dev/shm${key}`, bytes);
  return { key, remove: () => rmSync(`/dev/shm${key}`, { force: true }) };
}
export const FUZZ_SHM_KEY = `/tensorfn-fuzz-${process.pid}`;
export const FUZZ_REGION = "fuzz_region";

/** Calls of Triton's shared-memory extension: registrations, status, unregistrations and inferences that name regions, mutated. */
const sharedMemoryCall = fc
  .record({
    action: fc.constantFrom("register", "register", "status", "unregister", "infer", "infer", "infer"),
    region: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(FUZZ_REGION, "other", "r1") }, { weight: 1, arbitrary: oddName }),
    edits: fc.array(fc.record({ path: fc.array(fc.nat({ max: 30 }), { maxLength: 4 }), action: fc.nat({ max: 20 }), value: oddJson }), { maxLength: 2 }),
    key: fc.oneof({ weight: 3, arbitrary: fc.constant(FUZZ_SHM_KEY) }, fc.constantFrom("/etc/passwd", "/../../etc/passwd", "/", "", "/tensorfn-fuzz-nowhere", "relative", "/dev/shm/x", "\u0000")),
  })
  .map(({ action, region, edits, key }) => {
    let json: unknown;
    let path: string;
    let method = "POST";
    if (action === "register") {
      path = `/v2/systemsharedmemory/region/${region}/register`;
      json = { key, offset: 0, byte_size: 256 };
    } else if (action === "unregister") {
      path = region === FUZZ_REGION ? "/v2/systemsharedmemory/region/other/unregister" : `/v2/systemsharedmemory/region/${region}/unregister`;
      json = {};
    } else if (action === "status") {
      path = `/v2/systemsharedmemory/region/${region}/status`;
      method = "GET";
    } else {
      path = "/v2/models/simple/infer";
      const shm = (offset: number, size = 64) => ({ shared_memory_region: FUZZ_REGION, shared_memory_offset: offset, shared_memory_byte_size: size });
      json = { inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 16], parameters: shm(0) }, { name: "INPUT1", datatype: "INT32", shape: [1, 16], parameters: shm(64) }], outputs: [{ name: "OUTPUT0", parameters: shm(128) }, { name: "OUTPUT1", parameters: shm(192) }] };
    }
    for (const e of edits) json = mutateJson(json, e.path, e.action, e.value);
    return { path, method, body: json === undefined ? undefined : utf8.encode(JSON.stringify(json)), label: `shm ${action} ${region} ${JSON.stringify(json ?? null).slice(0, 80)}` };
  });

/** OpenAI's and Triton's generate calls on the tiny generator and encoder, mutated. */
const OPENAI_BASES: Array<{ path: string; json: Record<string, unknown> }> = [
  { path: "/v1/completions", json: { model: "tiny_gpt", prompt: "Once upon", max_tokens: 4, temperature: 0 } },
  { path: "/v1/completions", json: { model: "tiny_gpt", prompt: [72, 101, 108], max_tokens: 3, echo: true, logprobs: 2, temperature: 1, seed: 3, n: 2 } },
  { path: "/v1/completions", json: { model: "tiny_gpt", prompt: ["a", "b"], max_tokens: 0, echo: true, logprobs: 1 } },
  { path: "/v1/completions", json: { model: "tiny_gpt", prompt: "Hi", max_tokens: 5, stream: true, stream_options: { include_usage: true }, stop: ["x"], logit_bias: { "72": 5 } } },
  { path: "/v1/chat/completions", json: { model: "tiny_gpt", messages: [{ role: "system", content: "be brief" }, { role: "user", content: "hi" }], max_tokens: 4, logprobs: true, top_logprobs: 2 } },
  { path: "/v1/chat/completions", json: { model: "tiny_gpt", messages: [{ role: "user", content: "hi" }], max_completion_tokens: 3, stream: true } },
  { path: "/v1/embeddings", json: { model: "tiny_embed", input: ["hello", "world"], encoding_format: "base64", dimensions: 8 } },
  { path: "/v2/models/tiny_gpt/generate", json: { text_input: "Once", parameters: { max_tokens: 4, temperature: 0 } } },
  { path: "/v2/models/tiny_gpt/generate_stream", json: { text_input: "Once", sampling_parameters: JSON.stringify({ max_tokens: 3 }), exclude_input_in_output: true } },
];
const openAiCall = fc
  .record({
    base: fc.nat({ max: OPENAI_BASES.length - 1 }),
    edits: fc.array(fc.record({ path: fc.array(fc.nat({ max: 30 }), { maxLength: 4 }), action: fc.nat({ max: 20 }), value: oddJson }), { maxLength: 3 }),
  })
  .map(({ base, edits }) => {
    const b = OPENAI_BASES[base]!;
    let json: unknown = b.json;
    for (const e of edits) json = mutateJson(json, e.path, e.action, e.value);
    // A mutated max_tokens may ask for the model's whole length: fine, but a fuzz run is not a load test.
    if (json && typeof json === "object" && !Array.isArray(json)) {
      const j = json as Record<string, unknown>;
      for (const k of ["max_tokens", "max_completion_tokens", "n"]) if (typeof j[k] === "number" && (j[k] as number) > 64) j[k] = 64;
    }
    return { path: b.path, body: utf8.encode(JSON.stringify(json)), label: `openai ${b.path} ${JSON.stringify(json).slice(0, 100)}` };
  });

/** Well-formed HTTP requests: mutated inference bodies, odd paths, odd headers. */
export const framedRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({
    target: fc.oneof(
      { weight: 8, arbitrary: fc.constant("infer" as const) },
      { weight: 2, arbitrary: fc.constant("model" as const) },
      { weight: 1, arbitrary: fc.constant("other" as const) },
      { weight: 1, arbitrary: fc.constant("repository" as const) },
      { weight: 2, arbitrary: fc.constant("function" as const) },
      { weight: 1, arbitrary: fc.constant("png" as const) },
      { weight: 1, arbitrary: fc.constant("ensemble" as const) },
      { weight: 2, arbitrary: fc.constant("openai" as const) },
      { weight: 2, arbitrary: fc.constant("shm" as const) },
    ),
    image: hostilePng,
    openai: openAiCall,
    shm: sharedMemoryCall,
    ensemble: ensembleCall,
    functionPath: fc.oneof({ weight: 4, arbitrary: fc.constantFrom("/v1/functions/word_count", "/v1/functions/ocr") }, { weight: 1, arbitrary: functionName.map((n) => `/v1/functions/${n}`) }, { weight: 1, arbitrary: fc.constantFrom("/v1/functions", "/v1/functions/", "/v1/functions/word_count/x", "/v1/functions/%2e%2e") }),
    textBody: fc.oneof(fc.string({ maxLength: 200 }).map((t) => JSON.stringify({ text: t })), fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)), fc.string({ maxLength: 100 })),
    modelPath,
    otherPath,
    repositoryPath,
    version: fc.constantFrom("", "", "", "/versions/1", "/versions/2", "/versions/0"),
    body: fc.oneof({ weight: 6, arbitrary: inferBody }, { weight: 1, arbitrary: rawBinaryBody }),
    method: fc.oneof({ weight: 12, arbitrary: fc.constant(undefined) }, fc.constantFrom("GET", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "POST")),
    contentType,
    contentEncoding,
    compress: fc.boolean(),
    extra: extraHeaders,
  })
  .map(({ target, modelPath, otherPath, repositoryPath, functionPath, textBody, version, body, method, contentType, contentEncoding, compress, extra, image, ensemble, openai, shm }) => {
    const headers: Record<string, string> = { host: "127.0.0.1", ...extra };
    // undici refuses these client-side (and an `expect` refusal leaves its Pool stuck): raw cases send them.
    delete headers["transfer-encoding"];
    let path: string;
    let payload: Uint8Array | undefined = body.body;
    let label = body.label;
    if (target === "infer") path = `/v2/models/${body.fn}${version}/infer`;
    else if (target === "model") path = modelPath;
    else if (target === "other") path = otherPath;
    else if (target === "function") {
      // Function-style calls: a handler function's JSON (the word_count example), mutated bodies, odd names.
      path = functionPath;
      payload = textBody.length % 3 === 0 && body.body ? body.body : utf8.encode(textBody);
    } else if (target === "png") {
      // The function takes the PNG as its body; the ensemble as one BYTES element (binary extension).
      if (image.target === "function") {
        path = "/v1/functions/ocr";
        payload = image.bytes;
        headers["content-type"] = "image/png";
      } else {
        path = "/v2/models/ocr_ensemble/infer";
        const json = utf8.encode(JSON.stringify({ inputs: [{ name: "image", datatype: "BYTES", shape: [1], parameters: { binary_data_size: image.bytes.byteLength + 4 } }] }));
        payload = new Uint8Array([...json, ...encodeBinaryTensor({ datatype: "BYTES", shape: [1], data: [image.bytes] })]);
        headers["inference-header-content-length"] = String(json.byteLength);
      }
      label = image.label;
    } else if (target === "ensemble") {
      path = "/v2/models/simple_twice/infer";
      payload = ensemble.body;
      label = ensemble.label;
    } else if (target === "openai") {
      path = openai.path;
      payload = openai.body;
      label = openai.label;
    } else if (target === "shm") {
      path = shm.path;
      payload = shm.body;
      label = shm.label;
      // The control routes take JSON only (access.ts); the generators' content types still mix in below.
      headers["content-type"] = "application/json";
    } else {
      path = repositoryPath;
      payload = utf8.encode(JSON.stringify({ parameters: {} }));
      headers["content-type"] = "application/json";
      label = "repository";
    }
    if (target === "model" || target === "other" || target === "function") label = target;
    if (target === "infer" && body.headerLength !== undefined) headers["inference-header-content-length"] = body.headerLength;
    if (contentType !== undefined && target !== "png") headers["content-type"] = contentType;
    if (contentEncoding !== undefined) {
      headers["content-encoding"] = contentEncoding;
      // Half of the time the body really is compressed that way; the other half it lies.
      const e = contentEncoding.trim().toLowerCase();
      if (compress && payload) payload = e === "gzip" || e === "x-gzip" ? gzipSync(payload) : e === "deflate" ? deflateSync(payload) : payload;
    }
    const verb = method ?? (target === "model" || target === "other" ? "GET" : target === "shm" && shm.method === "GET" ? "GET" : "POST");
    if (verb === "GET" || verb === "HEAD") payload = undefined;
    return { kind: "framed" as const, method: verb, path, headers, body: payload, label: `${verb} ${label}` };
  });

/**
 * Requests that break HTTP framing: a Content-Length that lies, raw (unencoded) UTF-8, spaces or
 * control bytes in the path, very long paths. Sent with `Connection: close` over a fresh socket.
 */
export const rawRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({
    body: inferBody,
    expect: fc.option(fc.constantFrom("100-continue", "200-ok", ""), { freq: 4 }),
    declared: fc.oneof(fc.constantFrom("exact", "-1", "abc", "1e3", "", "99999999999999999999", "0x10", "1, 1"), fc.integer({ min: -16, max: -1 }).map((d) => `delta:${d}`)),
    path: fc.oneof(
      fc.constant("/v2/models/simple/infer"),
      fc.string({ unit: "grapheme", minLength: 1, maxLength: 10 }).map((s) => `/v2/models/${s}/infer`),
      fc.constantFrom("/v2/models/sim ple/infer", "/v2/models/\u0001/infer", "/v2/models/../../etc/passwd", "*", "v2/models/simple/infer", "/v2/models/simple/infer#frag", "http://127.0.0.1/v2/models/simple/infer"),
      fc.integer({ min: 4000, max: 20000 }).map((n) => `/v2/models/${"x".repeat(n)}/infer`),
    ),
  })
  .map(({ body, expect, declared, path }) => {
    const size = body.body.byteLength;
    let declaredLength = declared;
    // Only ever declare fewer bytes than sent: declaring more would leave the server waiting, by design.
    if (declared === "exact") declaredLength = String(size);
    else if (declared.startsWith("delta:")) declaredLength = String(Math.max(0, size + Number(declared.slice(6))));
    const headers: Record<string, string> = { host: "127.0.0.1", connection: "close", "content-type": "application/json", ...(expect ? { expect } : {}) };
    if (body.headerLength !== undefined) headers["inference-header-content-length"] = body.headerLength;
    return { kind: "raw" as const, method: "POST", path, headers, body: body.body, declaredLength, label: `raw ${body.label} cl=${declared}` };
  });

/** The mix the CI run and bench/suites/fuzz.ts use: mostly framed, a few raw. */
export const fuzzRequest: fc.Arbitrary<FuzzRequest> = fc.oneof({ weight: 19, arbitrary: framedRequest }, { weight: 1, arbitrary: rawRequest });
