import { afterEach, describe, expect, it } from "vitest";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { FUNCTIONS, TARGET_RUNTIME, cliEntry, inProcess, startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { spawnServer, tempRepository } from "../../harness/server-process.ts";
import { FakeClock } from "../support/fake-clock.ts";

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const call = async (name: string, body: string, headers: Record<string, string> = { "content-type": "application/json" }) => {
  const response = await fetch(`${server!.url}/v1/functions/${name}`, { method: "POST", body, headers });
  return { status: response.status, type: response.headers.get("content-type"), json: await response.json().catch(() => undefined) };
};

/** A repository with one handler function `fn` whose handler.ts is `source` (and `yaml` extra lines). */
function handlerRepository(source: string, yaml = ""): string {
  const repo = tempRepository();
  mkdirSync(join(repo, "fn", "1"), { recursive: true });
  writeFileSync(join(repo, "fn", "function.yaml"), `backend: handler\nhandler: handler.ts\n${yaml}`);
  writeFileSync(join(repo, "fn", "handler.ts"), source);
  return repo;
}

describe("handlers (backend: handler) through POST /v1/functions/{name}", () => {
  it("serves the word_count example: the body as it came, the handler's JSON back, each answer to its own request", async () => {
    server = await startServer({ repository: tempRepository("word_count") });
    const one = await call("word_count", JSON.stringify({ text: "the quick brown fox" }));
    expect(one).toEqual({ status: 200, type: "application/json", json: { words: 4, longest: "quick" } });
    const many = await Promise.all(Array.from({ length: 16 }, (_, i) => call("word_count", JSON.stringify({ text: "a ".repeat(i + 1) }))));
    expect(many.map((r) => r.json.words)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
    const stats = (await (await fetch(`${server.url}/v2/models/word_count/stats`)).json()).model_stats[0];
    expect(stats.inference_count).toBe(17);
    expect(stats.handler_stats.execute.ok.count).toBe(stats.execution_count);
  });

  it("answers the client's mistakes with 400 naming the function and the step, and only the culprit of a batch fails", async () => {
    server = await startServer({ repository: tempRepository("word_count") });
    const [bad, good, notJson, nullBody] = await Promise.all([call("word_count", JSON.stringify({ nope: 1 })), call("word_count", JSON.stringify({ text: "ok" })), call("word_count", "{"), call("word_count", "null")]);
    expect(nullBody.status).toBe(400); // the fuzzer's find: JSON that is not an object
    expect(bad).toMatchObject({ status: 400, json: { error: `function 'word_count' execute: send {"text": "..."}` } });
    expect(good).toMatchObject({ status: 200, json: { words: 1 } });
    expect(notJson.status).toBe(400);
    expect(notJson.json.error).toMatch(/^function 'word_count' execute: the request body is not JSON/);
  });

  it("turns a handler's own failure into 500 naming the function and the step, counted in stats and metrics", async () => {
    server = await startServer({ repository: handlerRepository(`export function execute() { throw new Error("boom"); }\n`) });
    const failed = await call("fn", "{}");
    expect(failed).toMatchObject({ status: 500, json: { error: "function 'fn' execute: failed: boom" } });
    const text = await (await fetch(`${server.url}/metrics`)).text();
    expect(text).toMatch(/^tensorfn_handler_calls_total\{model="fn",version="1",step="execute",outcome="error"\} 1$/m);
    const noExecute = handlerRepository(`export const nothing = 1;\n`);
    await server.close();
    server = await startServer({ repository: noExecute });
    expect((await call("fn", "{}")).json.error).toBe("function 'fn' execute: handler handler.ts exports no execute(requests, ctx)");
  });

  it("sends bytes and replies of a chosen type as they are", async () => {
    const source = `export function execute(requests, ctx) {
  return requests.map((r) => (r.contentType === "text/plain" ? ctx.reply(r.text().toUpperCase(), "text/plain; charset=utf-8") : new Uint8Array([1, 2, 3])));
}
`;
    server = await startServer({ repository: handlerRepository(source) });
    const upper = await fetch(`${server.url}/v1/functions/fn`, { method: "POST", body: "shout", headers: { "content-type": "text/plain" } });
    expect([upper.status, upper.headers.get("content-type"), await upper.text()]).toEqual([200, "text/plain; charset=utf-8", "SHOUT"]);
    const octets = await fetch(`${server.url}/v1/functions/fn`, { method: "POST", body: "x", headers: { "content-type": "application/x-thing" } });
    expect([octets.headers.get("content-type"), [...new Uint8Array(await octets.arrayBuffer())]]).toEqual(["application/octet-stream", [1, 2, 3]]);
  });

  it("never sends a media type a header cannot carry: a handler echoing CR/LF gets application/octet-stream", async () => {
    server = await startServer({ repository: handlerRepository(`export const execute = (rs, ctx) => rs.map((r) => ctx.reply("x", r.text()));\n`) });
    const bad = await fetch(`${server.url}/v1/functions/fn`, { method: "POST", body: "text/plain\r\nset-cookie: a=b" });
    expect([bad.status, bad.headers.get("content-type"), bad.headers.get("set-cookie")]).toEqual([200, "application/octet-stream", null]);
    const good = await fetch(`${server.url}/v1/functions/fn`, { method: "POST", body: "text/csv" });
    expect(good.headers.get("content-type")).toBe("text/csv");
  });

  it("imports the handler on its first call, never at start, initializes it once and finalizes it on unload", async () => {
    const repo = handlerRepository(`import { appendFileSync } from "node:fs";
const log = (what) => appendFileSync(${JSON.stringify("LOG")}, what + "\\n");
log("imported");
export function initialize(ctx) { log("initialize " + ctx.name + " v" + ctx.version + " " + ctx.parameters.greeting); }
export function execute(requests) { log("execute"); return requests.map(() => ({ ok: true })); }
export function finalize() { log("finalize"); }
`, "parameters: { greeting: hello }\n");
    const logFile = join(repo, "fn", "calls.log");
    writeFileSync(join(repo, "fn", "handler.ts"), readFileSync(join(repo, "fn", "handler.ts"), "utf8").replace(JSON.stringify("LOG"), JSON.stringify(logFile)));
    server = await startServer({ repository: repo, controlMode: "explicit", loadModels: ["fn"] });
    expect((await fetch(`${server.url}/v2/models/fn/ready`)).status).toBe(200);
    expect(existsSync(logFile)).toBe(false); // loaded and READY, handler code not run
    await call("fn", "{}");
    await call("fn", "{}");
    expect((await fetch(`${server.url}/v2/repository/models/fn/unload`, { method: "POST" })).status).toBe(200);
    expect(readFileSync(logFile, "utf8").trim().split("\n")).toEqual(["imported", "initialize fn v1 hello", "execute", "execute", "finalize"]);
  });

  it("runs the new code after a reload (the load API), not the module it imported before", async () => {
    const repo = handlerRepository(`export const execute = (rs) => rs.map(() => "old");\n`);
    server = await startServer({ repository: repo, controlMode: "explicit", loadModels: ["fn"] });
    expect((await call("fn", "{}")).json).toBe("old");
    writeFileSync(join(repo, "fn", "handler.ts"), `export const execute = (rs) => rs.map(() => "new");\n`);
    expect((await fetch(`${server.url}/v2/repository/models/fn/load`, { method: "POST" })).status).toBe(200);
    expect((await call("fn", "{}")).json).toBe("new");
  });

  it("reloads a function when a module its handler imports from its folder changes (poll mode, as `tensorfn dev`)", async () => {
    // lib/word.ts also reads a file beside itself through import.meta.url: it must still name
    // lib/ after a reload (Deno re-imports through a bundle written beside the handler).
    const repo = handlerRepository(`import { word, label } from "./lib/word.ts";\nexport const execute = (rs, ctx) => Promise.all(rs.map(async () => word + " " + (await label())));\n`);
    mkdirSync(join(repo, "fn", "lib"));
    writeFileSync(join(repo, "fn", "lib", "label.txt"), "from lib");
    const word = (w: string) => `import { readFile } from "node:fs/promises";\nexport const word = ${JSON.stringify(w)};\nexport const label = () => readFile(new URL("./label.txt", import.meta.url), "utf8");\n`;
    writeFileSync(join(repo, "fn", "lib", "word.ts"), word("old"));
    server = await startServer({ repository: repo, controlMode: "poll", pollIntervalMs: 100 });
    expect((await call("fn", "{}")).json).toBe("old from lib");
    writeFileSync(join(repo, "fn", "lib", "word.ts"), word("new, and longer"));
    await expect.poll(async () => (await call("fn", "{}")).json, { timeout: 20_000, interval: 200 }).toBe("new, and longer from lib");
    // Twice: the second reload must not see the first one's module either.
    writeFileSync(join(repo, "fn", "lib", "word.ts"), word("newest"));
    await expect.poll(async () => (await call("fn", "{}")).json, { timeout: 20_000, interval: 200 }).toBe("newest from lib");
    expect(readdirSync(join(repo, "fn")).filter((f) => f.startsWith("."))).toEqual([]);
  });

  it("logs a handler's failure with its stack at the TypeScript line, once a minute; the client gets the message alone", async () => {
    // Types above the failing line: a stack that was not mapped back to the source names another line.
    const repo = handlerRepository(`interface Body {
  n: number;
  nested?: { deep: string };
}
export function execute(requests: { json(): unknown }[]): string[] {
  return requests.map((r) => (r.json() as Body).nested!.deep);
}
`);
    const [command, args] = cliEntry(TARGET_RUNTIME, ["serve", "--repo", repo, "--port", "0"]);
    const cli = await spawnServer(command, args);
    try {
      for (let i = 0; i < 3; i++) {
        const response = await fetch(`${cli.url}/v1/functions/fn`, { method: "POST", body: "{}" });
        const body = (await response.json()) as { error: string };
        expect(response.status).toBe(500);
        expect(body.error).toMatch(/^function 'fn' execute: failed: \S/);
        expect(body.error).not.toMatch(/handler\.ts|\n\s+at /);
      }
      await cli.waitFor(/function 'fn' v1 execute failed: TypeError: [^\n]+\n\s+at [^\n]*fn\/handler\.ts:6:\d+/, 10_000);
      expect(cli.output().match(/execute failed/g)).toHaveLength(1);
      expect(cli.output().slice(cli.output().indexOf("execute failed"))).not.toContain(repo);
    } finally {
      await cli.stop();
    }
  });

  it("keeps the serving version when a reload's handler does not compile, and says where it fails", async () => {
    const repo = handlerRepository(`import { word } from "./word.ts";\nexport const execute = (rs) => rs.map(() => word);\n`);
    writeFileSync(join(repo, "fn", "word.ts"), `export const word = "old";\n`);
    server = await startServer({ repository: repo, controlMode: "explicit", loadModels: ["fn"] });
    expect((await call("fn", "{}")).json).toBe("old");
    writeFileSync(join(repo, "fn", "word.ts"), `export const word = "new" +;\n`);
    const load = await fetch(`${server.url}/v2/repository/models/fn/load`, { method: "POST" });
    expect(load.status).toBe(400);
    expect((await load.json()).error).toMatch(/handler does not compile: fn\/word\.ts:1:\d+: /);
    expect((await call("fn", "{}")).json).toBe("old");
    writeFileSync(join(repo, "fn", "handler.ts"), `import { word } from "./missing.ts";\nexport const execute = (rs) => rs.map(() => word);\n`);
    const again = await fetch(`${server.url}/v2/repository/models/fn/load`, { method: "POST" });
    expect((await again.json()).error).toMatch(/fn\/handler\.ts:1:\d+: Could not resolve "\.\/missing\.ts"/);
    expect((await call("fn", "{}")).json).toBe("old");
  });

  it("imports TypeScript handlers in `tensorfn serve` under Node too, from a repository outside any package (no \"type\": \"module\")", async () => {
    // The in-process server runs under vitest, which compiles TypeScript itself; the CLI relies on tsx.
    const repo = handlerRepository(`import type { FunctionRequest } from "./nowhere.ts"; // types only: erased
import { twice } from "./helper.ts";
export function execute(requests: FunctionRequest[]): number[] { return requests.map((r) => twice((r.json() as { n: number }).n)); }
`);
    writeFileSync(join(repo, "fn", "helper.ts"), "export const twice = (n: number): number => 2 * n;\n");
    const cli = await spawnServer("node", [fileURLToPath(new URL("../../adapters/node/bin.mjs", import.meta.url)), "serve", "--repo", repo, "--port", "0"]);
    try {
      const response = await fetch(`${cli.url}/v1/functions/fn`, { method: "POST", body: JSON.stringify({ n: 21 }) });
      expect([response.status, await response.json()]).toEqual([200, 42]);
    } finally {
      await cli.stop();
    }
  });

  it("loads handler code only from inside the function's folder: a symlink out of it fails the load", async () => {
    const repo = handlerRepository(`export const execute = (rs) => rs.map(() => 1);\n`);
    writeFileSync(join(repo, "outside.ts"), `export const execute = (rs) => rs.map(() => "escaped");\n`);
    writeFileSync(join(repo, "fn", "function.yaml"), "backend: handler\nhandler: link.ts\n");
    symlinkSync(join(repo, "outside.ts"), join(repo, "fn", "link.ts"));
    server = await startServer({ repository: repo });
    const r = await call("fn", "{}");
    expect(r.status).toBe(503);
    expect(r.json.error).toMatch(/handler link\.ts was not found inside the function's folder/);
  });

  it("ctx.readFile reads files of the function's folder and nothing outside it, by '..' or by symlink", async () => {
    const repo = handlerRepository(`export async function execute([r], ctx) {
  try {
    return [new TextDecoder().decode(await ctx.readFile(r.text()))];
  } catch (error) {
    return ["refused: " + error.message];
  }
}
`);
    mkdirSync(join(repo, "fn", "assets"));
    writeFileSync(join(repo, "fn", "assets", "labels.txt"), "cat\ndog\n");
    writeFileSync(join(repo, "secret.txt"), "do not read");
    symlinkSync(join(repo, "secret.txt"), join(repo, "fn", "link.txt"));
    server = await startServer({ repository: repo });
    const read = async (path: string) => (await call("fn", path, { "content-type": "text/plain" })).json;
    expect(await read("assets/labels.txt")).toBe("cat\ndog\n");
    for (const path of ["../secret.txt", "link.txt", "/etc/passwd", "assets/../../secret.txt", "missing.txt"]) {
      expect(await read(path)).toBe(`refused: function 'fn': ctx.readFile(${JSON.stringify(path)}) found no such file inside the function's folder`);
    }
  });

  it("lists functions with their kind and state; a model function refuses a body and points to the KServe route", async () => {
    server = await startServer({ repository: tempRepository("word_count", "simple") });
    const list = (await (await fetch(`${server.url}/v1/functions`)).json()).functions;
    expect(list.map((f: { name: string; kind: string; handler?: string }) => [f.name, f.kind, f.handler])).toEqual([["simple", "onnxruntime", undefined], ["word_count", "handler", "handler.ts"]]);
    const refused = await call("simple", "{}");
    expect(refused.status).toBe(400);
    expect(refused.json.error).toContain("send tensors to POST /v2/models/simple/infer");
    expect((await call("nothing_here", "{}")).status).toBe(404);
  });

  it("guards /v1/functions like inference and metadata: with --api-key-file, a key is needed", async () => {
    server = await startServer({ repository: tempRepository("word_count"), apiKeys: ["secret-key-1"] });
    expect((await call("word_count", JSON.stringify({ text: "a" }))).status).toBe(401);
    expect((await fetch(`${server.url}/v1/functions`)).status).toBe(401);
    const keyed = await call("word_count", JSON.stringify({ text: "a" }), { "content-type": "application/json", authorization: "Bearer secret-key-1" });
    expect(keyed.status).toBe(200);
  });

  it("answers tensor callers too: the KServe route with the BYTES tensors body and content_type", async () => {
    server = await startServer({ repository: tempRepository("word_count") });
    const text = JSON.stringify({ text: "one two" });
    const request = { inputs: [{ name: "body", datatype: "BYTES", shape: [1, 1], data: [text] }, { name: "content_type", datatype: "BYTES", shape: [1, 1], data: ["application/json"] }] };
    const response = await (await fetch(`${server.url}/v2/models/word_count/infer`, { method: "POST", body: JSON.stringify(request) })).json();
    expect(JSON.parse(response.outputs.find((o: { name: string }) => o.name === "body").data[0])).toEqual({ words: 2, longest: "one" });
  });
});

describe("tensor handlers (backend: handler with input and output): compute() as a model written in TypeScript", () => {
  const yaml = `max_batch_size: 8
dynamic_batching: {}
input: [{ name: x, data_type: TYPE_FP32, dims: [4] }]
output: [{ name: y, data_type: TYPE_FP32, dims: [4] }, { name: rows, data_type: TYPE_INT32, dims: [1] }]
`;
  const infer = async (x: number[][]) => {
    const request = { inputs: [{ name: "x", datatype: "FP32", shape: [x.length, 4], data: x.flat() }] };
    const response = await fetch(`${server!.url}/v2/models/fn/infer`, { method: "POST", body: JSON.stringify(request) });
    return { status: response.status, json: await response.json() };
  };

  it("answers the KServe route with its outputs, each request its own rows of the batch it ran in; compute counts in handler_stats", async () => {
    // y = 2x; rows = how many rows the call saw (so the test sees batching happen).
    const repo = handlerRepository(
      `export function compute({ x }) {
  const rows = x.shape[0];
  return { y: { datatype: "FP32", shape: x.shape, data: x.data.map((v) => v * 2) }, rows: { datatype: "INT32", shape: [rows, 1], data: new Int32Array(rows).fill(rows) } };
}
`,
      yaml,
    );
    server = await startServer({ repository: repo });
    const one = await infer([[1, 2, 3, 4]]);
    expect(one.json.outputs.find((o: { name: string }) => o.name === "y")).toMatchObject({ shape: [1, 4], data: [2, 4, 6, 8] });
    const many = await Promise.all(Array.from({ length: 6 }, (_, i) => infer([[i, i, i, i]])));
    many.forEach((r, i) => expect(r.json.outputs.find((o: { name: string }) => o.name === "y").data).toEqual([2 * i, 2 * i, 2 * i, 2 * i]));
    // Each answer has one row of `rows`: the size of the batch its request ran in (1 to 6).
    for (const r of many) expect(r.json.outputs.find((o: { name: string }) => o.name === "rows")).toMatchObject({ shape: [1, 1], data: [expect.any(Number)] });
    const stats = (await (await fetch(`${server.url}/v2/models/fn/stats`)).json()).model_stats[0];
    expect(stats.handler_stats.compute.ok.count).toBe(stats.execution_count);
    expect(stats.inference_count).toBe(7);
    // A body is not what it takes: the function route points to the KServe route.
    const refused = await call("fn", "{}");
    expect(refused.status).toBe(400);
    expect(refused.json.error).toBe("function 'fn' has no handler to take a body (its handler computes on tensors and has no preprocess); send tensors to POST /v2/models/fn/infer");
  });

  it("checks what compute returns as a model's outputs would be: a missing, mistyped or mis-shaped output is a 500 naming it", async () => {
    const repo = handlerRepository(
      `export function compute({ x }, ctx) {
  const kind = ctx.parameters.kind;
  const y = { datatype: "FP32", shape: x.shape, data: x.data };
  const rows = { datatype: "INT32", shape: [x.shape[0], 1], data: new Int32Array(x.shape[0]) };
  if (kind === "missing") return { y };
  if (kind === "type") return { y: { ...y, datatype: "INT32", data: new Int32Array(x.data.length) }, rows };
  return { y, rows: { ...rows, shape: [x.shape[0] + 1, 1], data: new Int32Array(x.shape[0] + 1) } };
}
`,
      `${yaml}parameters: { kind: missing }\n`,
    );
    server = await startServer({ repository: repo });
    const missing = await infer([[1, 2, 3, 4]]);
    expect(missing).toMatchObject({ status: 500, json: { error: "function 'fn' compute: output 'rows' is missing (compute returned: y)" } });
    for (const [kind, error] of [
      ["type", "function 'fn' compute: output 'y' is INT32; the config declares FP32"],
      ["rows", "function 'fn' compute: output 'rows' has 2 rows for a batch of 1"],
    ]) {
      writeFileSync(join(repo, "fn", "function.yaml"), `backend: handler\nhandler: handler.ts\n${yaml}parameters: { kind: ${kind} }\n`);
      expect((await fetch(`${server.url}/v2/repository/models/fn/load`, { method: "POST" })).status).toBe(200);
      expect((await infer([[1, 2, 3, 4]])).json.error).toBe(error);
    }
  });

  it("refuses a config that lists tensors one way only", async () => {
    const repo = handlerRepository(`export const compute = () => ({});\n`, "input: [{ name: x, data_type: TYPE_FP32, dims: [4] }]\n");
    server = await startServer({ repository: repo });
    const index = await (await fetch(`${server.url}/v2/repository/index`, { method: "POST" })).json();
    expect(index.find((e: { name: string }) => e.name === "fn").reason).toMatch(/backend 'handler' with tensors lists both input and output/);
  });
});

describe("handlers around a model: preprocess → the model (batched) → postprocess, and ctx.infer", () => {
  /** `simple` (the real ONNX model) with a handler that takes {"a": [...16], "b": [...16]}. */
  function simpleWithHandler(source: string): string {
    const repo = tempRepository("simple");
    writeFileSync(join(repo, "simple", "handler.ts"), source);
    writeFileSync(join(repo, "simple", "function.yaml"), readFileSync(join(repo, "simple", "function.yaml"), "utf8") + "handler: handler.ts\n");
    return repo;
  }
  const pre = `export function preprocess(request) {
  const { a, b } = request.json();
  return { INPUT0: { datatype: "INT32", shape: [1, 16], data: Int32Array.from(a) }, INPUT1: { datatype: "INT32", shape: [1, 16], data: Int32Array.from(b) } };
}
`;
  const a = Array.from({ length: 16 }, (_, i) => i);
  const b = Array(16).fill(1);

  it("answers with postprocess's JSON; the KServe route still takes tensors straight to the model", async () => {
    server = await startServer({ repository: simpleWithHandler(pre + "export const postprocess = (outputs) => ({ sum: [...outputs.OUTPUT0.data], difference: [...outputs.OUTPUT1.data] });\n") });
    const r = await call("simple", JSON.stringify({ a, b }));
    expect(r).toEqual({ status: 200, type: "application/json", json: { sum: a.map((x) => x + 1), difference: a.map((x) => x - 1) } });
    const kserve = await fetch(`${server.url}/v2/models/simple/infer`, {
      method: "POST",
      body: JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 16], data: a }, { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: b }] }),
    });
    expect((await kserve.json()).outputs[0].data).toEqual(a.map((x) => x + 1));
  });

  it("without postprocess, answers the model's outputs as JSON tensors; preprocess output that does not fit fails naming the input", async () => {
    server = await startServer({ repository: simpleWithHandler(pre) });
    const r = await call("simple", JSON.stringify({ a, b }));
    expect(r.json.outputs.OUTPUT0).toEqual({ datatype: "INT32", shape: [1, 16], data: a.map((x) => x + 1) });
    const short = await call("simple", JSON.stringify({ a: [1, 2], b: [1, 2] }));
    expect(short.status).toBe(500);
    expect(short.json.error).toBe("function 'simple' preprocess: input 'INPUT0' has 2 elements for shape [1, 16] (16)");
  });

  it("ctx.infer runs another function through its own scheduler (Triton's BLS)", async () => {
    const repo = handlerRepository(`export async function execute(requests, ctx) {
  return Promise.all(requests.map(async (r) => {
    const { a, b } = r.json();
    const out = await ctx.infer("simple", { INPUT0: { datatype: "INT32", shape: [1, 16], data: Int32Array.from(a) }, INPUT1: { datatype: "INT32", shape: [1, 16], data: Int32Array.from(b) } });
    return { sum: [...out.OUTPUT0.data] };
  }));
}
`);
    cpSync(join(FUNCTIONS, "simple"), join(repo, "simple"), { recursive: true });
    server = await startServer({ repository: repo });
    expect((await call("fn", JSON.stringify({ a, b }))).json).toEqual({ sum: a.map((x) => x + 1) });
    const stats = (await (await fetch(`${server.url}/v2/models/simple/stats`)).json()).model_stats[0];
    expect(stats.inference_count).toBe(1);
  });
});

describe.runIf(inProcess)("handlers in process (a fake clock, a gate the test opens)", () => {
  const shared = globalThis as { openGate?: () => void; batches?: number[]; running?: boolean };
  const turns = async (until: () => boolean | Promise<boolean>) => {
    for (let i = 0; i < 100_000 && !(await until()); i++) await new Promise((r) => setImmediate(r));
  };

  it("hands execute the requests that queued while it was busy, as batches of up to max_batch_size", async () => {
    shared.batches = [];
    shared.openGate = undefined;
    const repo = handlerRepository(`const g = globalThis;
export async function execute(requests) {
  g.batches.push(requests.length);
  if (g.batches.length === 1) await new Promise((resolve) => (g.openGate = resolve)); // holds the first call
  return requests.map((r) => r.json().n * 10);
}
`, "max_batch_size: 4\ndynamic_batching: {}\n");
    server = await startServer({ repository: repo, controlMode: "none" });
    const first = call("fn", JSON.stringify({ n: 0 }));
    await turns(() => shared.openGate !== undefined);
    const rest = Array.from({ length: 6 }, (_, i) => call("fn", JSON.stringify({ n: i + 1 })));
    const pending = async () => Number(/^nv_inference_pending_request_count\{model="fn",version="1"\} (\d+)$/m.exec(await (await fetch(`${server!.url}/metrics`)).text())?.[1]);
    await turns(async () => (await pending()) === 6);
    shared.openGate!();
    expect((await Promise.all([first, ...rest])).map((r) => r.json)).toEqual([0, 10, 20, 30, 40, 50, 60]);
    expect(shared.batches).toEqual([1, 4, 2]);
  });

  it("tells a handler its client went away: request.signal, and ctx.signal once every client of the call is gone", async () => {
    const seen = globalThis as { openGate?: () => void; started?: number; aborted?: string[] };
    seen.openGate = undefined;
    seen.started = 0;
    seen.aborted = [];
    // The first call holds the instance until the test opens the gate, so the next two share a batch.
    const repo = handlerRepository(`const g = globalThis;
let calls = 0;
export async function execute(requests, ctx) {
  if (calls++ === 0) {
    await new Promise((resolve) => (g.openGate = resolve));
    return requests.map(() => "first");
  }
  g.started += requests.length;
  requests.forEach((r) => r.signal.addEventListener("abort", () => g.aborted.push("request " + r.text())));
  return new Promise((resolve) => ctx.signal.addEventListener("abort", () => {
    g.aborted.push("call: " + ctx.signal.reason.message);
    resolve(requests.map(() => "too late"));
  }));
}
`, "max_batch_size: 4\ndynamic_batching: {}\n");
    server = await startServer({ repository: repo, controlMode: "none" });
    const first = call("fn", "{}");
    await turns(() => seen.openGate !== undefined);
    const clients = [new AbortController(), new AbortController()];
    const calls = clients.map((c, i) => fetch(`${server!.url}/v1/functions/fn`, { method: "POST", body: String(i), signal: c.signal }).catch((e: Error) => e.name));
    const pending = async () => Number(/^nv_inference_pending_request_count\{model="fn",version="1"\} (\d+)$/m.exec(await (await fetch(`${server!.url}/metrics`)).text())?.[1]);
    await turns(async () => (await pending()) === 2);
    seen.openGate!();
    expect((await first).json).toBe("first");
    await turns(() => seen.started === 2);
    clients[0]!.abort();
    await turns(() => seen.aborted!.length === 1);
    expect(seen.aborted).toEqual(["request 0"]); // the other client still waits: the call goes on
    clients[1]!.abort();
    await turns(() => seen.aborted!.length === 3);
    // (The call's signal and request 1's abort in the same turn, in either order.)
    expect([...seen.aborted!].sort()).toEqual(["call: function 'fn' execute: every client of this call went away", "request 0", "request 1"]);
    expect(await Promise.all(calls)).toEqual(["AbortError", "AbortError"]);
  });

  it("cuts off a call that runs past handler_timeout_ms with 504 naming the function, aborts its signal, and counts a timeout", async () => {
    const clock = new FakeClock();
    shared.running = false;
    const repo = handlerRepository(`export function execute(requests, ctx) {
  globalThis.running = true;
  return new Promise((resolve) => ctx.signal.addEventListener("abort", () => resolve(requests.map(() => "late"))));
}
`, "handler_timeout_ms: 250\n");
    server = await startServer({ repository: repo, clock, controlMode: "none" });
    const pending = call("fn", "{}");
    await turns(() => shared.running === true);
    clock.advance(249);
    await new Promise((r) => setImmediate(r));
    clock.advance(1);
    const r = await pending;
    expect(r).toMatchObject({ status: 504, json: { error: "function 'fn' execute: took longer than handler_timeout_ms (250 ms)" } });
    const stats = (await (await fetch(`${server.url}/v2/models/fn/stats`)).json()).model_stats[0];
    expect(stats.handler_stats.execute.timeout.count).toBe(1);
  });
});
