import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync, cpSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FUNCTIONS, startServer } from "../../harness/start-server.ts";
import type { TestServer } from "../../harness/start-server.ts";
import { tempRepository } from "../../harness/server-process.ts";

// Everything here goes through real HTTP against the real server (and onnxruntime), under Node,
// Bun and Deno alike: the load API is where a hostile client reaches the file system.
let server: TestServer;
let repo: string;
let outside: string;
const model = readFileSync(join(FUNCTIONS, "simple", "1", "model.onnx"));

beforeAll(async () => {
  repo = tempRepository("simple");
  // A model outside the repository, reachable only by escaping it.
  outside = mkdtempSync(join(tmpdir(), "tensorfn-outside-"));
  mkdirSync(join(outside, "1"));
  writeFileSync(join(outside, "1", "model.onnx"), model);
  // `linked`: a version whose model is a symlink out of the function's folder.
  cpSync(join(repo, "simple"), join(repo, "linked"), { recursive: true });
  symlinkSync(join(outside, "1", "model.onnx"), join(repo, "linked", "1", "model.onnx.link"));
  writeFileSync(join(repo, "linked", "function.yaml"), `${readFileSync(join(repo, "simple", "function.yaml"), "utf8")}default_model_filename: model.onnx.link\n`);
  // `inside`: a symlink that stays inside its function's folder is fine.
  cpSync(join(repo, "simple"), join(repo, "inside"), { recursive: true });
  symlinkSync(join(repo, "inside", "1", "model.onnx"), join(repo, "inside", "1", "alias.onnx"));
  writeFileSync(join(repo, "inside", "function.yaml"), `${readFileSync(join(repo, "simple", "function.yaml"), "utf8")}default_model_filename: alias.onnx\n`);
  // `missing`: no model file at all; its error must look like `linked`'s.
  mkdirSync(join(repo, "missing", "1"), { recursive: true });
  writeFileSync(join(repo, "missing", "function.yaml"), readFileSync(join(repo, "simple", "function.yaml"), "utf8"));
  // A version folder too large to be a version: ignored, as Triton ignores non-numeric ones.
  cpSync(join(repo, "simple", "1"), join(repo, "simple", "99999999999999999999"), { recursive: true });
  server = await startServer({ repository: repo, limits: { uploadBytes: 100 } });
});
afterAll(() => server.close());

async function load(name: string, parameters: Record<string, unknown> = {}): Promise<{ status: number; error?: string }> {
  const response = await fetch(`${server.url}/v2/repository/models/${name}/load`, { method: "POST", headers: JSON_HEADERS, body: JSON.stringify({ parameters }) });
  const body = (await response.json()) as { error?: string };
  return { status: response.status, error: body.error };
}

const JSON_HEADERS = { "content-type": "application/json" };
const config = (extra: Record<string, unknown>) => ({ config: JSON.stringify({ max_batch_size: 8, ...extra }) });

describe("the load API cannot reach outside the repository", () => {
  it("refuses a default_model_filename with '..' or an absolute path (400), without printing absolute paths", async () => {
    for (const path of [`../../../../${outside}/1/model.onnx`, "../../simple/1/model.onnx", `${outside}/1/model.onnx`]) {
      const { status, error } = await load("simple", config({ default_model_filename: path }));
      expect(status, path).toBe(400);
      expect(error).toMatch(/default_model_filename: .*(leaves or skips a folder|is absolute)/);
    }
  });

  it("refuses a model file that is a symlink out of its function's folder, as if it were missing", async () => {
    const escaped = await load("linked");
    const missing = await load("missing");
    expect(escaped).toEqual({ status: 400, error: "failed to load 'linked': model file linked/1/model.onnx.link was not found inside the function's folder" });
    expect(missing).toEqual({ status: 400, error: "failed to load 'missing': model file missing/1/model.onnx was not found inside the function's folder" });
    for (const { error } of [escaped, missing]) expect(error).not.toContain(tmpdir());
  });

  it("follows a symlink that stays inside the function's folder", async () => {
    expect(await load("inside")).toEqual({ status: 200, error: undefined });
  });

  it("ignores a version folder over 2^31−1", async () => {
    const index = (await (await fetch(`${server.url}/v2/repository/index`, { method: "POST", headers: JSON_HEADERS })).json()) as { name: string; version?: string }[];
    expect(index.filter((r) => r.name === "simple").map((r) => r.version)).toEqual(["1"]);
  });
});

describe("the load API has limits", () => {
  it("refuses configs over the server's ceilings with 400 naming the field, the value and the flag", async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ instance_group: [{ count: 10000, kind: "KIND_CPU" }] }, /instance_group\[0\]\.count: 10000 is over the server's ceiling of 64 instances per function \(--max-instances\)/],
      [{ parameters: { intra_op_thread_count: { string_value: "2000" } } }, /parameters\.intra_op_thread_count: 2000 is over the server's ceiling of \d+ threads \(--max-threads\)/],
      [{ max_batch_size: 1e9 }, /max_batch_size: 1000000000 is over the server's ceiling of 65536 \(--max-batch-size\)/],
      [
        { model_warmup: [{ name: "w", batch_size: 20000000, inputs: { INPUT0: { data_type: "TYPE_INT32", dims: [16], zero_data: true } } }], max_batch_size: undefined },
        /model_warmup\[0\]\.batch_size: .*--max-warmup-elements/,
      ],
    ];
    for (const [extra, message] of cases) {
      const { status, error } = await load("simple", config(extra));
      expect(status, JSON.stringify(extra)).toBe(400);
      expect(error).toMatch(message);
    }
  });

  it("refuses an upload over --max-upload-size with 413, and a file: version over 2^31−1 with 400", async () => {
    const file = Buffer.from(model).toString("base64");
    const big = await load("uploaded", { ...config({}), "file:1/model.onnx": file });
    expect(big.status).toBe(413);
    expect(big.error).toMatch(/--max-upload-size/);
    const version = await load("uploaded", { ...config({}), "file:99999999999999999999/model.onnx": file });
    expect(version.status).toBe(400);
    expect(version.error).toMatch(/version 99999999999999999999 is over 2147483647/);
  });
});

describe("function names", () => {
  it("are refused with 400 naming the rule in load, unload and park", async () => {
    // ".." never reaches a route: URL parsing folds it (and %2E%2E) away; the unit tests cover it.
    for (const name of ["a%2Fb", ".hidden", "a%0AINFO%20forged", "%1B%5B31mred", "a%00b", "x".repeat(129)]) {
      for (const action of ["load", "unload", "park"]) {
        const response = await fetch(`${server.url}/v2/repository/models/${name}/${action}`, { method: "POST", headers: JSON_HEADERS, body: "{}" });
        expect(response.status, `${action} ${name}`).toBe(400);
        expect(((await response.json()) as { error: string }).error).toMatch(/^invalid function name: .*function names use only A-Z, a-z, 0-9/);
      }
    }
  });
});
