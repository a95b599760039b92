import { describe, expect, it } from "vitest";
import { checkFunctionConfig, checkRepository, formatIssue, type RepositoryReader } from "../../../runtime/config/mod.ts";
import type { DirEntry } from "../../../runtime/core/mod.ts";

/** An in-memory repository: paths ending in "/" are folders, others files with their text. */
function reader(paths: Record<string, string>): RepositoryReader {
  return {
    readDir(path: string): Promise<DirEntry[]> {
      const prefix = `${path}/`;
      const names = new Map<string, boolean>();
      for (const p of Object.keys(paths)) {
        if (!p.startsWith(prefix)) continue;
        const rest = p.slice(prefix.length);
        if (!rest) continue;
        const [head, ...tail] = rest.split("/");
        names.set(head!, tail.length > 0 || (names.get(head!) ?? false));
      }
      if (names.size === 0 && !(prefix in paths)) return Promise.reject(new Error(`no such directory '${path}'`));
      return Promise.resolve([...names].map(([name, isDirectory]) => ({ name, isDirectory, isFile: !isDirectory })));
    },
    realPath(path: string): Promise<string | undefined> {
      const exists = path in paths || Object.keys(paths).some((p) => p.startsWith(`${path}/`));
      return Promise.resolve(exists ? path : undefined);
    },
    readTextFile(path: string): Promise<string> {
      const text = paths[path];
      return text === undefined ? Promise.reject(new Error(`no such file '${path}'`)) : Promise.resolve(text);
    },
  };
}

describe("`checkRepository()`", () => {
  it("passes a valid repository, including a function with no function.yaml", async () => {
    const repo = reader({
      "repo/simple/function.yaml": "max_batch_size: 8\n",
      "repo/simple/1/model.onnx": "",
      "repo/simple/2/model.onnx": "",
      "repo/auto/1/model.onnx": "",
      "repo/custom/function.yaml": "default_model_filename: net.onnx\n",
      "repo/custom/3/net.onnx/": "",
      "repo/echo/function.yaml":
        "backend: identity\ninput: [{ name: A, data_type: TYPE_FP32, dims: [1] }]\noutput: [{ name: B, data_type: TYPE_FP32, dims: [1] }]\n",
      "repo/echo/1/": "",
      "repo/README.md": "not a function",
      "repo/.git/HEAD": "",
    });
    expect(await checkRepository(repo, "repo")).toEqual([]);
  });

  it("reports config issues with their lines, and missing version folders or models at line 0", async () => {
    const repo = reader({
      "repo/bad/function.yaml": "max_batch_size: 8\nmax_batch: 4\n",
      "repo/bad/1/model.onnx": "",
      "repo/empty/function.yaml": "",
      "repo/empty/0/model.onnx": "",
      "repo/empty/01/model.onnx": "",
      "repo/empty/v2/model.onnx": "",
      "repo/gap/1/model.onnx": "",
      "repo/gap/2/weights.bin": "",
      "repo/nothing/": "",
    });
    const issues = await checkRepository(repo, "repo");
    expect(issues.map(formatIssue)).toEqual([
      "repo/bad/function.yaml:2: max_batch: unknown field; did you mean 'max_batch_size'?",
      "repo/empty:0: version: no version folder with model.onnx",
      "repo/gap/2:0: version: no model.onnx in version folder 2",
      "repo/nothing:0: version: no version folder with model.onnx",
    ]);
  });

  it("reports an identity function without any version folder", async () => {
    const repo = reader({
      "repo/echo/function.yaml":
        "backend: identity\ninput: [{ name: A, data_type: TYPE_FP32, dims: [1] }]\noutput: [{ name: B, data_type: TYPE_FP32, dims: [1] }]\n",
    });
    expect((await checkRepository(repo, "repo")).map(formatIssue)).toEqual(["repo/echo:0: version: no version folder (1/, 2/…)"]);
  });

  it("reports an unreadable repository as one issue", async () => {
    const issues = await checkRepository(reader({}), "missing");
    expect(issues).toEqual([{ file: "missing", line: 0, field: "", problem: "cannot read the repository: no such directory 'missing'" }]);
  });
});

describe("`checkFunctionConfig()`", () => {
  it("returns the parse issues of one file", () => {
    expect(checkFunctionConfig("simple", "f.yaml", "max_batch_size: 8\n")).toEqual([]);
    expect(checkFunctionConfig("simple", "f.yaml", "name: other\n").map(formatIssue)).toEqual([
      "f.yaml:1: name: 'other' does not match the folder name 'simple'; rename one or remove name",
    ]);
  });
});

describe("`checkRepository()` applies the rules a load applies", () => {
  it("reports invalid folder names, version folders over 2^31−1, values over the ceilings and warm-ups that do not fit", async () => {
    const { defaultLoadLimits } = await import("../../../runtime/config/mod.ts");
    const repo = reader({
      "repo/bad name/1/model.onnx": "",
      "repo/big/function.yaml": "instance_group: [{ count: 10000 }]\n",
      "repo/big/1/model.onnx": "",
      "repo/big/99999999999999999999/model.onnx": "",
      "repo/warm/function.yaml":
        "max_batch_size: 4\ninput: [{ name: x, data_type: TYPE_FP32, dims: [1] }]\nmodel_warmup: [{ name: w, inputs: { y: { data_type: TYPE_FP32, dims: [1], zero_data: true } } }]\n",
      "repo/warm/1/model.onnx": "",
    });
    expect((await checkRepository(repo, "repo", { limits: defaultLoadLimits(2) })).map(formatIssue)).toEqual([
      `repo/"bad name":0: name: skipped at load: function names use only A-Z, a-z, 0-9, '_', '.' and '-', do not start with '.', and are at most 128 characters`,
      "repo/big/function.yaml:1: instance_group[0].count: 10000 is over the server's ceiling of 64 instances per function (--max-instances)",
      "repo/big/99999999999999999999:0: version: ignored at load: versions go up to 2147483647",
      "repo/warm/function.yaml:3: model_warmup[0].inputs.y: 'y' is not an input (inputs: x)",
    ]);
  });

  it("reports a model file that is a symlink out of its function's folder", async () => {
    const { mkdtempSync, mkdirSync, symlinkSync, writeFileSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { createNodePlatform } = await import("../../../adapters/node/platform.ts");
    const dir = mkdtempSync(join(tmpdir(), "tensorfn-check-"));
    mkdirSync(join(dir, "repo", "escape", "1"), { recursive: true });
    mkdirSync(join(dir, "repo", "ok", "1"), { recursive: true });
    writeFileSync(join(dir, "outside.onnx"), "");
    writeFileSync(join(dir, "repo", "ok", "1", "real.onnx"), "");
    symlinkSync(join(dir, "outside.onnx"), join(dir, "repo", "escape", "1", "model.onnx"));
    symlinkSync(join(dir, "repo", "ok", "1", "real.onnx"), join(dir, "repo", "ok", "1", "model.onnx"));
    const issues = await checkRepository(createNodePlatform(), join(dir, "repo"));
    expect(issues.map((i) => `${i.file.slice(dir.length)}: ${i.problem}`)).toEqual(["/repo/escape/1: no model.onnx in version folder 1"]);
  });
});
